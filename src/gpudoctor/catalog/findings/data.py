"""Findings in the area "data"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "data"
EMITTED_BY = "[`gpudoctor run`](../commands/run.md), `gpudoctor.watch()`"


SAMPLER_WITHOUT_SET_EPOCH = FindingKind(
    id="sampler-without-set-epoch",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A `DistributedSampler` with `shuffle=True` was iterated a second time with the same
epoch number: `set_epoch()` was never called (or not with a new value) between epochs.""",
    evidence="""`epoch` (the value it kept), `iterations`, `num_replicas`, `dataset size`, `source`/`line`
(the loop that iterated it), `rank` or `ranks`.""",
    title="{sampler} iterated {iterations} times, always with epoch {epoch}: every epoch sees the same order",
    why="A shuffling DistributedSampler seeds its shuffle with seed + epoch; without set_epoch() the epoch stays the same, so the 'shuffle' repeats one permutation every epoch.",
    fix="sampler.set_epoch(epoch)   # first line of each epoch, before iterating the DataLoader",
)


SPAWNED_RANK_LOADER_WORKERS = FindingKind(
    id="spawned-rank-loader-workers",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor run`](../commands/run.md)",
    summary="""In a rank started with `torch.multiprocessing.spawn` (or Lightning's `ddp_spawn`), a
DataLoader with `num_workers > 0` and `persistent_workers=False` started new workers at
every epoch; the finding gives the time each epoch waited for its first batch. Also
reported when the loader's workers are started with `spawn` or `forkserver` in any process.""",
    evidence="""`num_workers`, `persistent_workers`, `workers start with` (the start method),
`epochs`, `first batch after iter(loader), s` (one per epoch), `total start-up, s`,
`source`/`line` (the loop), `rank`/`ranks`.""",
    title={
        "spawned-rank": "DataLoader workers re-created every epoch in a spawned rank: {startup_s:.2f} s of start-up per epoch",
        "start-method": "DataLoader workers re-created every epoch in workers started with '{method}': "
        "{startup_s:.2f} s of start-up per epoch",
    },
    why="Without persistent_workers, every epoch starts num_workers new processes that must rebuild the dataset; in a spawned rank that is paid again each epoch before the first batch.",
    fix={
        "lightning": "DataLoader(..., num_workers={workers}, persistent_workers=True)   or Trainer(strategy=\"ddp\") instead of \"ddp_spawn\"",
        "spawn": "DataLoader(..., num_workers={workers}, persistent_workers=True)   # or start ranks with torchrun instead of mp.spawn",
    },
)
