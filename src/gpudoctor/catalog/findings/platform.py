"""Findings in the area "platform"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "platform"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


PLATFORM_LIMITS = FindingKind(
    id="platform-limits",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The machine runs Windows or macOS (or another OS that is not Linux), so some of gpudoctor's checks do not apply there. This finding names them, instead of leaving them silently out.",
    evidence="""`platform` (as `platform.platform()` reports it on the machine probed) and `does not apply`: the checks that have nothing to look at on that OS.

| OS | does not apply | what runs instead |
|---|---|---|
| Windows | NCCL, `/dev/shm`, the open-files limit, the PCI listing | gloo for every collective (PyTorch's Windows wheels have no NCCL); `nccl-missing` is `info` there |
| macOS | the NVIDIA driver and NVML, CUDA devices and `CUDA_VISIBLE_DEVICES`, NCCL, `/dev/shm`, the PCI listing | torch on MPS (Apple GPU) or CPU; distributed training on gloo |""",
    title={
        "windows": "Windows: NCCL is not built for Windows (GPU collectives run on gloo), and /dev/shm and the open-files limit do not exist",
        "macos": "macOS: no CUDA and no NVIDIA driver; torch runs on MPS (Apple GPU) or CPU, and distributed training on gloo",
        "other": "An operating system gpudoctor is not built for: some checks may not apply",
    },
    why={
        "windows": "torch.distributed on Windows has gloo only: DDP works, slower than NCCL; `allreduce` and `train-smoke` use gloo. For NCCL and every check, run on Linux or under WSL2.",
        "macos": "macOS torch wheels have no CUDA: the GPU checks have nothing to look at. Multi-process training there uses gloo on CPU tensors.",
        "other": "gpudoctor's checks are written for Linux, with Windows and macOS handled; on this OS missing facts are shown as unavailable.",
    },
    fix={
        "windows": "wsl --install  # then install the NVIDIA CUDA driver for WSL and a Linux torch wheel inside it",
        "macos": "device = torch.device('mps' if torch.backends.mps.is_available() else 'cpu')  # backend='gloo'",
    },
)
