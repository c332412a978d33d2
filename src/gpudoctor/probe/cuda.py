"""What this process's torch sees of CUDA, for choosing a multi-rank job's
backend and device (launch/backend.py). Never raises: a torch that cannot be
imported is a fact (import_error) for the caller to report."""

from __future__ import annotations

import importlib.util
import os
import re
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
    imported: bool = True  # False: read from a CPU-only build's files; torch was not imported


def probe_cuda(quick: bool = False) -> CudaFacts:
    """What torch in this process sees of CUDA.

    `quick`: a launcher that only needs the backend may skip the import (~1.5 s,
    which its ranks pay again) when the installed torch is a CPU-only build, whose
    answer is known from its version file: no CUDA, no NCCL. Whether that torch
    imports is then learnt from the ranks; `imported` says which way it went."""
    if quick:
        facts = cpu_build_facts()
        if facts is not None:
            return facts
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # noqa: BLE001 - a broken torch is a fact for the caller to report
        from gpudoctor.core.unavailable import describe_error

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


_ASSIGNED = re.compile(r"^(__version__|cuda|hip)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.M)


def cpu_build_facts() -> CudaFacts | None:
    """The facts of the installed torch when its torch/version.py says it is built
    without CUDA and ROCm, found without importing torch; None when it is not such
    a build, or the file cannot be read (then only the import can tell)."""
    try:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = next(iter(spec.submodule_search_locations))
        with open(os.path.join(folder, "version.py"), encoding="utf-8") as fh:
            values = dict(_ASSIGNED.findall(fh.read()))
    except Exception:  # noqa: BLE001 - a finder that refuses torch, an unreadable install
        return None
    if values.get("cuda") != "None" or values.get("hip") != "None" or "__version__" not in values:
        return None
    version = values["__version__"].strip("'\"")
    return CudaFacts(False, 0, False, None, version, imported=False)
