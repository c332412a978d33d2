"""Findings in the area "checkpoints"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "checkpoints"
EMITTED_BY = "[`gpudoctor run`](../commands/run.md)"


CHECKPOINT_DDP_WRAPPER = FindingKind(
    id="checkpoint-ddp-wrapper",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""`torch.save` was given a `DistributedDataParallel` wrapper, or a state_dict whose every
key starts with `module.` (what `ddp_model.state_dict()` returns) — the object itself or one
level into it (`{"model": ddp.state_dict(), "optimizer": ...}`).""",
    evidence="""`path` (or *a buffer*), `found in` (`the object saved`, `obj['model']`, ...), `key` (an
example `module.`-prefixed key), `source`/`line`, `rank`/`ranks`.""",
    title={
        "wrapper": "torch.save of the DistributedDataParallel wrapper{to}",
        "state-dict": "torch.save of a DDP state_dict{to}",
    },
    why="Its keys carry a 'module.' prefix (and a pickled wrapper needs a process group), so the checkpoint does not load into the plain model: 'Unexpected key(s) in state_dict: module.…'.",
    fix="torch.save(model.module.state_dict(), path)   # the wrapped model, not the DDP wrapper",
)


CHECKPOINT_EVERY_RANK = FindingKind(
    id="checkpoint-every-rank",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Several ranks called `torch.save` for the same path. Each rank counts its saves of a path
in the process group's own store, so the rank that saves second knows at once (under
torchrun, `--nproc` or `mp.spawn`); with `--nproc` or `mp.spawn` the merged report also
compares the ranks' saves directly. A path on a node-local disk (ext4, xfs, tmpfs, a
container's overlay: read from `/proc/self/mounts`) is counted per node, so each node's local
rank 0 saving its own copy is no clash; on a network file system (NFS, Lustre, GPFS, ...) or
where the mount cannot be read, one path is one file for every node.""",
    evidence="""`path`, `ranks seen saving it`, `writers` (how many ranks saved it), `world size`, `node`
(a node-local path: the node whose ranks clashed), `not rank 0`, `source`/`line`.""",
    title="{writers} ranks saved the same checkpoint {path}",
    why="Every rank writes the same file at the same time: N times the I/O, and a torn checkpoint when the writes interleave. The ranks hold the same weights; one copy is enough.",
    fix="if dist.get_rank() == 0: torch.save(model.module.state_dict(), path)   # then dist.barrier()",
)
