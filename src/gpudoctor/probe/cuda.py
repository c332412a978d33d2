"""What this process's torch sees of CUDA, for choosing a multi-rank job's
backend and device (launch/backend.py). Never raises: a torch that cannot be
imported is a fact (import_error) for the caller to report."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CudaFacts:
    """What this process's torch sees of CUDA."""

    available: bool
    device_count: int
    nccl: bool  # torch.distributed.is_nccl_available()
    torch_cuda: str | None  # torch.version.cuda; None for a CPU-only build
    torch_version: str = ""
    import_error: str | None = None  # "ImportError: ..." when torch itself cannot be imported


def probe_cuda() -> CudaFacts:
    """What torch in this process sees of CUDA. Importing torch here is fine:
    the launcher needs it anyway for the rendezvous store."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # noqa: BLE001 - a broken torch is a fact for the caller to report
        from gpudoctor.probe.unavailable import describe_error

        return CudaFacts(False, 0, False, None, "not importable", import_error=describe_error(exc))
    try:
        available = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count()) if available else 0
    except Exception:
        available, count = False, 0
    try:
        nccl = bool(dist.is_available() and dist.is_nccl_available())
    except Exception:
        nccl = False
    return CudaFacts(available, count, nccl, torch.version.cuda, torch.__version__)
