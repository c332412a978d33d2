"""--backend auto|nccl|gloo and --device auto|cpu|cuda: which pair this machine runs.

`choose` is pure (facts in, a pair or a one-line reason out) so every rule is
tested without a GPU; `probe_devices` asks torch for the facts and never raises.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceFacts:
    cuda_available: bool
    gpu_count: int
    nccl_available: bool
    gloo_available: bool = True
    reason: str = ""  # why CUDA is not usable, when it is not


class DeviceChoiceError(ValueError):
    """The asked-for backend/device cannot run here; the message is one line."""


def probe_devices() -> DeviceFacts:
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # noqa: BLE001 - a broken torch is a fact, not a crash
        return DeviceFacts(False, 0, False, False, f"torch failed to import: {exc}")
    try:
        available = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count()) if available else 0
    except Exception as exc:  # noqa: BLE001
        available, count = False, 0
        reason = f"torch.cuda failed: {exc}"
    else:
        reason = "" if available else _no_cuda_reason(torch)
    nccl = bool(getattr(dist, "is_nccl_available", lambda: False)())
    gloo = bool(getattr(dist, "is_gloo_available", lambda: True)())
    return DeviceFacts(available, count, nccl, gloo, reason)


def _no_cuda_reason(torch) -> str:
    if getattr(torch.version, "cuda", None) is None:
        return f"torch {torch.__version__} is a CPU-only build"
    return "torch.cuda.is_available() is False"


def choose(backend: str, device: str, nproc: int, facts: DeviceFacts) -> tuple[str, str]:
    """(backend, device) to run, resolving "auto"; DeviceChoiceError if the asked pair cannot run."""
    no_cuda = facts.reason or "no CUDA device is visible"
    if device == "cuda" and not (facts.cuda_available and facts.gpu_count):
        raise DeviceChoiceError(f"--device cuda needs a CUDA GPU, and {no_cuda}; use --device cpu")
    if backend == "nccl":
        if device == "cpu":
            raise DeviceChoiceError("NCCL carries only CUDA tensors; use --backend gloo with --device cpu")
        if not (facts.cuda_available and facts.gpu_count):
            raise DeviceChoiceError(f"--backend nccl needs a CUDA GPU, and {no_cuda}; use --backend gloo")
        if not facts.nccl_available:
            raise DeviceChoiceError("this torch build has no NCCL (torch.distributed.is_nccl_available() is False); use --backend gloo")
        if nproc > facts.gpu_count:
            raise DeviceChoiceError(
                f"NCCL needs one GPU per rank: --nproc {nproc} but {facts.gpu_count} GPU(s) visible; "
                f"use --nproc {facts.gpu_count} or --backend gloo"
            )
        return "nccl", "cuda"
    if backend == "gloo" and not facts.gloo_available:
        raise DeviceChoiceError("this torch build has no gloo backend (torch.distributed.is_gloo_available() is False)")
    if device == "auto":
        # gloo asked for by name: the CPU path it is made for; otherwise a GPU when there is one.
        device = "cuda" if backend != "gloo" and facts.cuda_available and facts.gpu_count else "cpu"
    if backend == "auto":
        # NCCL for GPU tensors when every rank has its own GPU; else gloo (which also carries CUDA tensors).
        gpu_per_rank = device == "cuda" and facts.nccl_available and nproc <= facts.gpu_count
        backend = "nccl" if gpu_per_rank else "gloo"
        if backend == "gloo" and not facts.gloo_available:
            raise DeviceChoiceError("no usable backend: no gloo in this torch build and NCCL cannot run here")
    return backend, device
