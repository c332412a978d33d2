"""Which backend and device a multi-rank job runs on: `--backend auto|nccl|gloo`
and `--device auto|cpu|cuda`, resolved the same way for every command.

`choose_backend` is pure (what torch sees comes in as CudaFacts) so each rule is
tested without a GPU; probe/cuda.py's `probe_cuda` asks this process's torch.
An impossible request is an ImpossibleRequest whose one-line message says what
would work instead (the CLI prints it as a usage error, exit 2)."""

from __future__ import annotations

from gpudoctor.core.usage import UsageError
from gpudoctor.probe.cuda import CudaFacts

BACKENDS = ("auto", "nccl", "gloo")
DEVICES = ("auto", "cpu", "cuda")


class ImpossibleRequest(UsageError):
    """A request that cannot run here; the message is one line that says what would
    (a usage error: the CLI exits 2, the API raises it as a ValueError)."""


def one_of(flag: str, value: str, choices: tuple[str, ...]) -> str:
    """`value` normalised (case, surrounding spaces), or ImpossibleRequest naming the choices."""
    normal = value.strip().lower()
    if normal not in choices:
        raise ImpossibleRequest(f"{flag} must be one of {', '.join(choices)} (got '{value}')")
    return normal


def choose_backend(backend: str, device: str, ranks_per_host: int, cuda: CudaFacts) -> tuple[str, str]:
    """(backend, device) to run: `auto` is NCCL on CUDA when every rank on this
    host can have its own GPU, else gloo on CPU. Impossible requests raise."""
    gpus = cuda.device_count if cuda.available else 0
    _refuse_impossible(backend, device, ranks_per_host, cuda, gpus)
    if backend == "nccl":
        return "nccl", "cuda"
    if backend == "gloo":
        return "gloo", "cuda" if device == "cuda" else "cpu"
    return _choose_auto(device, ranks_per_host, cuda, gpus)


def _refuse_impossible(backend: str, device: str, ranks_per_host: int, cuda: CudaFacts, gpus: int) -> None:
    """ImpossibleRequest for an explicit --backend nccl / --device cuda this machine cannot run."""
    why_no_cuda = (
        f"this torch {cuda.torch_version} is a CPU-only build".strip()
        if cuda.torch_cuda is None
        else "torch.cuda.is_available() is False"
    )
    if backend == "nccl" and device == "cpu":
        raise ImpossibleRequest("NCCL moves only CUDA tensors; use --backend gloo with --device cpu, or --device cuda")
    if backend == "nccl" or device == "cuda":
        asked = "--backend nccl" if backend == "nccl" else "--device cuda"
        if not cuda.available or gpus == 0:
            raise ImpossibleRequest(f"{asked} needs CUDA, but {why_no_cuda}; use --backend gloo --device cpu to test CPU ranks")
    if backend == "nccl":
        if not cuda.nccl:
            raise ImpossibleRequest("this torch has no NCCL (torch.distributed.is_nccl_available() is False); use --backend gloo")
        if ranks_per_host > gpus:
            raise ImpossibleRequest(
                f"--backend nccl needs one GPU per rank: {ranks_per_host} ranks on this host but {gpus} GPU(s) visible; "
                f"use --nproc {gpus}, or --backend gloo --device cpu"
            )


def _choose_auto(device: str, ranks_per_host: int, cuda: CudaFacts, gpus: int) -> tuple[str, str]:
    """--backend auto: NCCL when every rank on this host has its own GPU, else gloo."""
    if device == "cpu":
        return "gloo", "cpu"
    if cuda.available and cuda.nccl and 0 < ranks_per_host <= gpus:
        return "nccl", "cuda"
    if device == "cuda":
        if ranks_per_host > gpus:
            raise ImpossibleRequest(
                f"--device cuda needs one GPU per rank: {ranks_per_host} ranks on this host but {gpus} GPU(s) visible; "
                f"use --nproc {gpus}"
            )
        return "gloo", "cuda"  # CUDA without NCCL: gloo stages through host memory
    return "gloo", "cpu"


def ranks_competing_for_gpus(local_world_size: int, cuda: CudaFacts, visible_devices: str | None) -> int:
    """How many ranks of a joined job share the GPUs this rank can see.

    A launcher that binds one GPU per task (SLURM's --gpus-per-task, or a
    CUDA_VISIBLE_DEVICES set per rank) leaves each rank seeing exactly one GPU:
    then no two ranks compete for it. If they in fact share it, NCCL itself
    refuses ("Duplicate GPU detected") and that failure is reported.
    """
    if cuda.device_count == 1 and visible_devices not in (None, ""):
        return 1
    return local_world_size


def rank_device_index(local_rank: int, device_count: int) -> int:
    """The CUDA device a rank uses: its local rank; 0 when the launcher bound it to
    one GPU. (More ranks than GPUs only reaches here for gloo, which may share.)"""
    return local_rank % device_count if device_count > 0 else 0
