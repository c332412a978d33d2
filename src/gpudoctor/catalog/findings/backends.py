"""Findings in the area "backends"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "backends"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


BACKEND_CHOICE = FindingKind(
    id="backend-choice",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Which backend to use for what, on this machine: NCCL for GPU tensors, gloo for CPU tensors, MPI only when torch was built with it; and so what `gpudoctor allreduce` and `gpudoctor train-smoke` will run (NCCL with one rank per GPU, otherwise gloo on CPU).",
    evidence="`GPU tensors`, `CPU tensors`, `also built in` (mpi, ucc).",
    title={
        "no-gpu": "No CUDA GPU for torch: `allreduce` and `train-smoke` will run on CPU with gloo",
        "no-nccl": "No NCCL: `allreduce` and `train-smoke` will run on CPU with gloo",
        "one-gpu": "1 GPU: `allreduce` and `train-smoke` will use NCCL for 1 rank, one GPU each, and gloo on CPU beyond that",
        "gpus": "{gpus} GPUs: `allreduce` and `train-smoke` will use NCCL for up to {gpus} ranks, one GPU each, and gloo on CPU beyond that",
    },
    more_why="Picking NCCL for CPU tensors, or two NCCL ranks on one GPU, fails at the first collective.",
    more_fix="""Nothing to fix. In your own code:

```python
dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
```""",
)


BACKEND_GLOO = FindingKind(
    id="backend-gloo",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The gloo backend is available.",
    evidence="Which backends the build has: `gloo`, `nccl`, `mpi`, `ucc`, `xccl`.",
    title="gloo is available (CPU tensors; works anywhere)",
    more_why="gloo runs collectives on CPU tensors everywhere; it is what `allreduce` and `train-smoke` use on a machine without GPUs.",
    more_fix="Nothing to fix. When it is missing it is reported as [`gloo-missing`](gloo-missing.md).",
)


BACKEND_NCCL = FindingKind(
    id="backend-nccl",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch sees CUDA GPUs and has NCCL.",
    evidence="Which backends the build has.",
    title="NCCL {nccl} is available for GPU tensors",
    more_why="NCCL is the backend for GPU tensors.",
    more_fix="Nothing to fix. When it is missing it is reported as [`nccl-missing`](nccl-missing.md).",
)


DISTRIBUTED_UNAVAILABLE = FindingKind(
    id="distributed-unavailable",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`torch.distributed.is_available()` is `False` in this torch build.",
    evidence="`torch`, `torch.distributed.is_available()`.",
    title="torch.distributed is not available in this torch build",
    why="Without torch.distributed there is no DDP, no all-reduce and no torchrun; some builds (older macOS wheels, custom builds with USE_DISTRIBUTED=0) leave it out.",
    fix="pip install --force-reinstall torch  # an official Linux wheel includes gloo and NCCL",
)


GLOO_MISSING = FindingKind(
    id="gloo-missing",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The gloo backend is not in this torch build (`error` when NCCL is missing too, `warn` otherwise).",
    evidence="Which backends the build has.",
    title="The gloo backend is not available in this torch build",
    why="gloo is the backend for CPU tensors and the fallback on machines without NCCL; without it, collectives on CPU tensors cannot run.",
    fix="pip install --force-reinstall torch  # official wheels include gloo",
)


NCCL_MISSING = FindingKind(
    id="nccl-missing",
    severity=Severity.ERROR,
    also=(Severity.INFO,),
    when="info on Windows",
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch sees CUDA GPUs, but its build has no NCCL. On Windows this is expected (PyTorch's Windows wheels have no NCCL): the finding is `info` there and says to use gloo (see [`platform-limits`](platform-limits.md)).",
    evidence="Which backends the build has, `CUDA (build)`, `GPUs torch sees` (and `platform` on Windows).",
    title={
        "windows": "torch sees {gpus} CUDA GPU(s); NCCL is not built for Windows, so GPU collectives use gloo",
        "not-built": "torch sees {gpus} CUDA GPU(s) but NCCL is not available",
    },
    why={
        "windows": "PyTorch's Windows wheels ship gloo only. DDP works with backend='gloo' (slower than NCCL: tensors go through host memory); NCCL needs Linux or WSL2.",
        "not-built": "NCCL is the backend for GPU tensors; without it, multi-GPU training falls back to gloo, which copies through host memory and is far slower (and some collectives do not run at all).",
    },
    fix={
        "windows": "dist.init_process_group(backend=\"gloo\")  # or run under WSL2 for NCCL",
        "not-built": "pip install --force-reinstall torch  # a Linux CUDA wheel ships NCCL",
    },
)
