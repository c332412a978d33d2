"""Findings of the straggler doctor (`gpudoctor run`: where the step time goes)."""

from gpudoctor.catalog.entry import FindingDoc

RUN = "[`gpudoctor run`](../commands/run.md)"

ENTRIES = (
    FindingDoc(
        id="rank-straggler",
        severity="warn",
        area="performance",
        emitted_by=RUN,
        summary="""One rank (or every rank of one node) arrives late at the steps' collectives, so every
other rank waits for it: the title names the rank and its node, how late it arrives and at
what share of the steps, the phase of the step in which it spends more time than the median
of the other ranks (loading data, forward, backward, optimizer step, or its own Python between
them), and how much faster the job would run if it kept up.""",
        evidence="""`rank`, `node`, `late node` (when all the ranks of one node are late and no other),
`phase`, `late ms per step` (its mean arrival after the first rank), `last to arrive at`
(share of the steps), `excess ms per step` (in that phase, over the other ranks' median),
`step ms`, `speedup if it kept up` (step time / (step time − lateness)), `its phases ms`,
`other ranks' median phases ms`, `steps compared`, `step ends at` (optimizer, backward or
collective).""",
        why="""Every collective waits for its last rank, DDP's gradient all-reduce included: a rank that is
late by *d* ms per step makes every other rank wait *d* ms per step, so the whole job runs at
the speed of its slowest rank. Clocks of different nodes are never compared: each rank
measures its own wait inside the collectives, and the rank that waits least is the one the
others wait for.""",
        fix="""Fit the fix to the phase:

- **data**: feed that rank faster —
  `DataLoader(dataset, num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4)`,
  and check the storage its node reads from;
- **forward / backward**: look for an uneven batch or a rank-dependent branch
  (`if rank == k:`); if the work is even, the device is slower or throttled: `gpudoctor check`
  on that node;
- **optimizer**: uneven parameter shards, or a slower device (`gpudoctor check`);
- **other**: work done on one rank only between steps (logging, checkpointing, evaluation
  under `if rank == 0:`): move it out of the step, or spread it over the ranks.""",
        checked="""Each rank accounts for every step on its own clock (runtime/step_clock.py): the DataLoader
iterator, DDP's forward, backward up to the autograd engine's final callback, the wait for
DDP's gradient all-reduce after it, the optimizer step, and every torch.distributed
collective call. The ranks' records are lined up by step number. Noise floor: a rank is a
straggler only when its mean lateness is at least 5 ms and 15 % of the step, and it is the
last to arrive at 70 % of the steps or more (balanced jobs stay well below; see
docs/commands/run.md, "Where the step time goes").""",
    ),
    FindingDoc(
        id="collective-wait",
        severity="warn",
        area="performance",
        emitted_by=RUN,
        summary="""Every rank spends a large part of each step (30 % or more, and at least 5 ms) waiting
inside collectives, and no rank arrives late: the transfer itself is what the ranks wait for.""",
        evidence="`wait ms per step` (median over the ranks), `step ms`, `share of the step`, `latest rank` and its `late ms per step`, `steps compared`.",
        why="""When the ranks arrive together and still wait, the time goes into moving the bytes: a slow
or misconfigured link between the ranks (TCP instead of InfiniBand, NCCL falling back to
sockets, a PCIe path instead of NVLink), or a backend path slower than the compute it should
overlap.""",
        fix="""Measure the links, and find the slow one:

```sh
gpudoctor allreduce
gpudoctor allreduce --bisect
```""",
    ),
)
