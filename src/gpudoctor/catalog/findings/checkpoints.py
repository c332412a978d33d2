"""Findings in the area "checkpoints"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="checkpoint-ddp-wrapper",
        severity="warn",
        area="checkpoints",
        emitted_by="[`gpudoctor run`](../commands/run.md)",
        summary="""`torch.save` was given a `DistributedDataParallel` wrapper, or a state_dict whose every
key starts with `module.` (what `ddp_model.state_dict()` returns) — the object itself or one
level into it (`{"model": ddp.state_dict(), "optimizer": ...}`).""",
        evidence="""`path` (or *a buffer*), `found in` (`the object saved`, `obj['model']`, ...), `key` (an
example `module.`-prefixed key), `source`/`line`, `rank`/`ranks`.""",
        why="""The plain model cannot load it: *Unexpected key(s) in state_dict: "module.fc.weight"...*;
every consumer then has to strip the prefix, and a pickled wrapper needs a process group
to load.""",
        fix="""```python
torch.save(model.module.state_dict(), path)
```

Related: lint rule [save-ddp-wrapper](../rules/save-ddp-wrapper.md); `gpudoctor
train-smoke`'s [checkpoint-module-prefix](checkpoint-module-prefix.md).""",
        says="Its keys carry a 'module.' prefix (and a pickled wrapper needs a process group), so the checkpoint does not load into the plain model: 'Unexpected key(s) in state_dict: module.…'.",
        does="torch.save(model.module.state_dict(), path)   # the wrapped model, not the DDP wrapper",
    ),
    FindingDoc(
        id="checkpoint-every-rank",
        severity="warn",
        area="checkpoints",
        emitted_by="[`gpudoctor run`](../commands/run.md)",
        summary="""Several ranks called `torch.save` for the same path. Each rank counts its saves of a path
in the process group's own store, so the rank that saves second knows at once (under
torchrun, `--nproc` or `mp.spawn`); with `--nproc` or `mp.spawn` the merged report also
compares the ranks' saves directly.""",
        evidence="""`path`, `ranks seen saving it`, `writers` (how many ranks saved it), `world size`, `not
rank 0`, `source`/`line`.""",
        why="""`torch.save(...)` outside `if rank == 0:` runs on every rank: N processes write one file at
the same time, the last one wins, a reader may see a half-written file, and on a shared
filesystem it costs N times the I/O. The ranks hold the same weights: one copy is enough.""",
        fix="""```python
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), path)
dist.barrier()   # before any rank reads it
```

Related: lint rule [save-all-ranks](../rules/save-all-ranks.md); `gpudoctor train-smoke`'s
[checkpoint-written-by-many](checkpoint-written-by-many.md).""",
        says="Every rank writes the same file at the same time: N times the I/O, and a torn checkpoint when the writes interleave. The ranks hold the same weights; one copy is enough.",
        does="if dist.get_rank() == 0: torch.save(model.module.state_dict(), path)   # then dist.barrier()",
    ),
)
