"""The torch build against the machine: does it import, does it have CUDA,
is the driver new enough for it, does it carry kernels for these GPUs."""

from __future__ import annotations

import re

from gpudoctor.checks.visibility import parse_visible_devices, select_gpus
from gpudoctor.catalog.findings.torch import (
    ARCH_MISSING,
    ARCH_SUPPORTED,
    CUDA_UNAVAILABLE,
    DRIVER_CUDA_VERSION,
    DRIVER_TOO_OLD,
    TORCH_BUILD,
    TORCH_CPU_BUILD_WITH_GPUS,
    TORCH_IMPORT_FAILED,
    TORCH_PROBE_FAILED,
)
from gpudoctor.checks.wording import or_none, plural, shown
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.core.unavailable import Unavailable

# CUDA builds published on download.pytorch.org/whl/<tag>, oldest first.
WHEEL_TAGS = ((11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0))
# Compute capabilities of Jetson/Tegra parts: their code runs nowhere else, and
# they run no other code (the iGPU exceptions in torch's DEVICE_REQUIREMENT).
INTEGRATED = {53, 62, 72, 87, 101}
# The end of the ImportError a Python without torch raises (not "torch._C": that one is broken).
NOT_INSTALLED = "No module named 'torch'"


def version_tuple(text: str | None | Unavailable) -> tuple[int, int] | None:
    if not isinstance(text, str):
        return None
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def has_nvidia_hardware(facts: Facts) -> bool:
    devices = facts.system.display_devices
    on_bus = isinstance(devices, tuple) and any(d.nvidia for d in devices)
    return bool(facts.nvml.gpus) or on_bus


def torch_pin(facts: Facts) -> str:
    """The `pin` of the catalog's pip command: this torch version (torch==2.4.1), or torch."""
    version = facts.torch.version if isinstance(facts.torch.version, str) else ""
    return "torch==" + version.split("+")[0] if version else "torch"


def wheel_index(facts: Facts) -> str:
    """The `index` of the catalog's pip command: the newest CUDA wheel tag the
    driver can run (<= the driver's CUDA), e.g. cu121."""
    driver = version_tuple(facts.nvml.cuda_driver_version)
    tags = [t for t in WHEEL_TAGS if driver is None or t <= driver] or [WHEEL_TAGS[0]]
    major, minor = tags[-1]
    return f"cu{major}{minor}"


def torch_import_failed(error: str, **evidence) -> Finding:
    """`import torch` raised: nothing else can run. Also what allreduce and
    train-smoke report instead of a traceback."""
    if NOT_INSTALLED in error:
        # gpudoctor does not depend on torch (it examines the user's own), so a
        # Python without one is a plain, common case: say so rather than "broken".
        return TORCH_IMPORT_FAILED(case="not-installed", evidence={"error": error, **evidence})
    return TORCH_IMPORT_FAILED(case="broken", evidence={"error": error, **evidence}, error=error)


def check_torch_import(facts: Facts) -> list[Finding]:
    t = facts.torch
    if t.status == "import-failed":
        return [
            torch_import_failed(
                t.error,
                where=t.detail,
                python=shown(t.executable),
                PYTHONPATH=facts.environment.get("PYTHONPATH"),
                LD_LIBRARY_PATH=facts.environment.get("LD_LIBRARY_PATH"),
            )
        ]
    if t.status in ("timeout", "probe-failed"):
        evidence = {"status": t.status, "error": t.error, "stderr (end)": t.detail}
        return [TORCH_PROBE_FAILED(evidence=evidence, error=t.error)]
    return []


def check_torch_build(facts: Facts) -> list[Finding]:
    t = facts.torch
    if not t.imported:
        return []
    evidence = {
        "torch": shown(t.version),
        "CUDA (build)": or_none(t.cuda),
        "cuDNN": or_none(t.cudnn),
        "NCCL": or_none(t.nccl),
        "location": shown(t.path),
    }
    if isinstance(t.hip, str):
        return [TORCH_BUILD(case="rocm", evidence=evidence, version=t.version, hip=t.hip)]
    if t.cuda is None:
        if has_nvidia_hardware(facts):
            seen = {**evidence, "GPUs NVML sees": len(facts.nvml.gpus), "driver": shown(facts.nvml.driver_version)}
            return [TORCH_CPU_BUILD_WITH_GPUS(evidence=seen, version=t.version, pin=torch_pin(facts), index=wheel_index(facts))]
        return [TORCH_BUILD(case="cpu", severity=Severity.INFO, evidence=evidence, version=t.version)]
    return [TORCH_BUILD(case="cuda", evidence=evidence, version=t.version, cuda=t.cuda, cudnn=shown(t.cudnn), nccl=shown(t.nccl))]


def check_driver_version(facts: Facts) -> list[Finding]:
    t = facts.torch
    build = version_tuple(t.cuda) if t.imported else None
    driver = version_tuple(facts.nvml.cuda_driver_version)
    too_old_warning = [w for w in t.cuda_warnings if "too old" in w.lower()]
    if build is None or (driver is None and not too_old_warning):
        return []
    evidence = {
        "torch built with CUDA": t.cuda,
        "driver": shown(facts.nvml.driver_version),
        "driver supports CUDA up to": shown(facts.nvml.cuda_driver_version),
    }
    pin, index, driver_cuda = torch_pin(facts), wheel_index(facts), facts.nvml.cuda_driver_version
    if too_old_warning or (driver is not None and build[0] > driver[0]):
        # torch's own warning may say so where NVML gives no driver version
        supported = f" (it supports CUDA {driver_cuda})" if driver else ""
        warned = {**evidence, "torch warning": too_old_warning[0] if too_old_warning else None}
        return [DRIVER_TOO_OLD(case="major", evidence=warned, cuda=t.cuda, supported=supported, pin=pin, index=index)]
    if driver is not None and build > driver:
        return [DRIVER_TOO_OLD(case="minor", severity=Severity.WARN, evidence=evidence, cuda=t.cuda, driver_cuda=driver_cuda,
                               pin=pin, index=index)]
    return [DRIVER_CUDA_VERSION(evidence=evidence, driver_cuda=driver_cuda, cuda=t.cuda)]


def arch_runs_on(arch: str, device_cc: int) -> bool:
    """Whether code compiled for `arch` (an entry of torch.cuda.get_arch_list())
    runs on a GPU of compute capability `device_cc` (e.g. 90 for 9.0)."""
    m = re.fullmatch(r"(sm|compute)_(\d+)([af]?)", arch)
    if not m:
        return False
    kind, code_cc, suffix = m.group(1), int(m.group(2)), m.group(3)
    if code_cc in INTEGRATED or device_cc in INTEGRATED:
        return code_cc == device_cc or (code_cc == 101 and device_cc == 110)
    if suffix == "a":  # arch-specific features: that exact GPU only
        return code_cc == device_cc
    if kind == "compute":  # PTX: the driver compiles it for any newer GPU
        return device_cc >= code_cc
    # SASS: runs on the same major version, same or newer minor ("f" too).
    return device_cc // 10 == code_cc // 10 and device_cc >= code_cc


def _capabilities(facts: Facts) -> list[tuple[str, str]]:
    """(label, "X.Y") for each GPU: torch's devices, else NVML's."""
    out = [
        (f"cuda:{d.index} {shown(d.name)}", d.capability)
        for d in facts.torch.devices
        if isinstance(d.capability, str)
    ]
    if not out:
        out = [(f"GPU {g.index} {shown(g.name)}", g.capability) for g in facts.nvml.gpus if isinstance(g.capability, str)]
    return out


def check_arch_list(facts: Facts) -> list[Finding]:
    t = facts.torch
    if not (t.imported and isinstance(t.cuda, str) and isinstance(t.arch_list, tuple) and t.arch_list):
        return []
    caps = _capabilities(facts)
    if not caps:
        return []
    missing = []
    for label, cap in caps:
        v = version_tuple(cap)
        if v and not any(arch_runs_on(a, v[0] * 10 + v[1]) for a in t.arch_list):
            missing.append(f"{label} (sm_{v[0]}{v[1]})")
    evidence = {"arch list": list(t.arch_list), "GPUs": [f"{label}: {cap}" for label, cap in caps]}
    if not missing:
        return [ARCH_SUPPORTED(evidence=evidence, capabilities=", ".join(sorted({c for _, c in caps})))]
    return [ARCH_MISSING(evidence=evidence, version=t.version, gpus=", ".join(missing), pin=torch_pin(facts), index=wheel_index(facts))]


def check_cuda_available(facts: Facts) -> list[Finding]:
    """A CUDA build, GPUs the driver sees, and still is_available() is False."""
    t = facts.torch
    if not (t.imported and isinstance(t.cuda, str) and facts.nvml.gpus and t.is_available is False):
        return []
    build, driver = version_tuple(t.cuda), version_tuple(facts.nvml.cuda_driver_version)
    if (build and driver and build[0] > driver[0]) or any("too old" in w.lower() for w in t.cuda_warnings):
        return []  # driver-too-old explains it
    visible = facts.visible_devices
    selection = select_gpus(parse_visible_devices(visible), facts.nvml)
    if isinstance(selection.gpus, tuple) and not selection.gpus:
        return []  # CUDA_VISIBLE_DEVICES hides every GPU: the visibility findings explain it
    evidence = {
        "torch": shown(t.version),
        "CUDA (build)": t.cuda,
        "driver": shown(facts.nvml.driver_version),
        "CUDA_VISIBLE_DEVICES": visible,
        "torch warnings": list(t.cuda_warnings) or "none",
    }
    return [CUDA_UNAVAILABLE(evidence=evidence, gpus=plural(len(facts.nvml.gpus), "GPU"))]


CHECKS = (check_torch_import, check_torch_build, check_driver_version, check_arch_list, check_cuda_available)
