"""Findings in the area "distributed"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "distributed"
EMITTED_BY = "[`gpudoctor run`](../commands/run.md)"


NCCL_RANK_DEVICE = FindingKind(
    id="nccl-rank-device",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""After `init_process_group("nccl")` (and again when `DistributedDataParallel` is built, the
later look counting), this rank's current CUDA device is not its `LOCAL_RANK`:
`torch.cuda.set_device(local_rank)` is missing, so the rank works on `cuda:0`. Also
reported when `LOCAL_RANK` is beyond the GPUs this process can see while
`CUDA_VISIBLE_DEVICES` is unset: more ranks than GPUs on the node.""",
    evidence="""`rank`, `backend`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `CUDA_VISIBLE_DEVICES`, `visible
GPUs`, `current device` (or the `device_id` given to `init_process_group`), `checked at`.

Without CUDA (a CPU-only machine, a CPU build) nothing is read and nothing is reported.
One GPU per rank through `CUDA_VISIBLE_DEVICES` (each rank sees its own GPU as `cuda:0`) is
fine.""",
    title={
        "wrong-device": "rank {rank} runs NCCL on cuda:{device}, not on its LOCAL_RANK cuda:{local_rank}",
        "ranks-share-gpu": "rank {rank} has LOCAL_RANK {local_rank} but only {count} GPU(s) are visible: ranks share a GPU",
    },
    why="NCCL needs one GPU per rank. Without torch.cuda.set_device(local_rank) every rank works on cuda:0: they share one GPU ('Duplicate GPU detected') or leave the others idle.",
    fix={
        "wrong-device": "torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))   # before init_process_group(\"nccl\")",
        "ranks-share-gpu": "torchrun --nproc_per_node {nproc} ...   # one rank per GPU",
    },
)
