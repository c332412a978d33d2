"""Findings in the area "data"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="sampler-without-set-epoch",
        severity="warn",
        area="data",
        emitted_by="[`gpudoctor run`](../commands/run.md), `gpudoctor.watch()`",
        summary="""A `DistributedSampler` with `shuffle=True` was iterated a second time with the same
epoch number: `set_epoch()` was never called (or not with a new value) between epochs.""",
        evidence="""`epoch` (the value it kept), `iterations`, `num_replicas`, `dataset size`, `source`/`line`
(the loop that iterated it), `rank` or `ranks`.""",
        why="""`DistributedSampler` seeds its shuffle with `seed + epoch`. Without `set_epoch(epoch)`
every epoch reads the same permutation on every rank: the shuffle happens once, which slows
and can bias training.""",
        fix="""```python
for epoch in range(epochs):
    sampler.set_epoch(epoch)
    for batch in loader:
        ...
```

Related: the lint rule [sampler-no-set-epoch](../rules/sampler-no-set-epoch.md) finds the
same in the source, and `gpudoctor train-smoke`'s
[sampler-order-fixed](sampler-order-fixed.md) checks the order itself.""",
        says="A shuffling DistributedSampler seeds its shuffle with seed + epoch; without set_epoch() the epoch stays the same, so the 'shuffle' repeats one permutation every epoch.",
        does="sampler.set_epoch(epoch)   # first line of each epoch, before iterating the DataLoader",
    ),
    FindingDoc(
        id="spawned-rank-loader-workers",
        severity="warn",
        area="data",
        emitted_by="[`gpudoctor run`](../commands/run.md)",
        summary="""In a rank started with `torch.multiprocessing.spawn` (or Lightning's `ddp_spawn`), a
DataLoader with `num_workers > 0` and `persistent_workers=False` started new workers at
every epoch; the finding gives the time each epoch waited for its first batch. Also
reported when the loader's workers are started with `spawn` or `forkserver` in any process.""",
        evidence="""`num_workers`, `persistent_workers`, `workers start with` (the start method),
`epochs`, `first batch after iter(loader), s` (one per epoch), `total start-up, s`,
`source`/`line` (the loop), `rank`/`ranks`.""",
        why="""A process started by spawn inherits the spawn start method, so its DataLoader workers are
spawned too: each is a new interpreter that imports torch and unpickles the dataset before
its first batch, and without persistent workers that is paid again every epoch, in every
rank. This is what Lightning warns about: *Dataloader(num_workers>0) and ddp_spawn do not
mix well!*""",
        fix="""Keep the workers between epochs, or start ranks as torchrun does:

```python
DataLoader(dataset, sampler=sampler, num_workers=4, persistent_workers=True)
pl.Trainer(strategy="ddp", ...)   # Lightning: instead of "ddp_spawn"
torchrun --nproc_per_node 2 train.py   # instead of mp.spawn
```

Related: `gpudoctor train-smoke --num-workers W` measures the same cost
([dataloader-worker-startup](dataloader-worker-startup.md)); lint rule
[spawn-num-workers](../rules/spawn-num-workers.md).""",
        says="Without persistent_workers, every epoch starts num_workers new processes that must rebuild the dataset; in a spawned rank that is paid again each epoch before the first batch.",
        fix_cases={
            "lightning": 'DataLoader(..., num_workers={workers}, persistent_workers=True)   or Trainer(strategy="ddp") instead of "ddp_spawn"',
            "spawn": "DataLoader(..., num_workers={workers}, persistent_workers=True)   # or start ranks with torchrun instead of mp.spawn",
        },
    ),
)
