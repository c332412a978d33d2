"""The driver and the physical GPUs as NVML sees them: is there a driver,
is the "second GPU" an NVIDIA one at all, is memory already taken, is MIG on,
can the GPUs reach each other directly (P2P)."""

from __future__ import annotations

from collections.abc import Sequence

from gpudoctor.catalog.findings.gpus import (
    GPU_COMPUTE_MODE_RESTRICTED,
    GPU_MEMORY_FREE,
    GPU_MEMORY_IN_USE,
    MIG_ENABLED,
    NO_NVIDIA_GPU,
    NON_NVIDIA_DISPLAY_ADAPTER,
    NVIDIA_DRIVER,
    NVIDIA_DRIVER_MISSING,
    NVML_ERROR,
    P2P_OK,
    P2P_UNAVAILABLE,
)
from gpudoctor.checks.platform import MACOS, family
from gpudoctor.checks.visibility import parse_visible_devices
from gpudoctor.checks.wording import plural, shown, size
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.nvml import INIT_FAILED, PYNVML_MISSING, NvmlGpu

# Memory in use on a GPU nobody should be using yet: above this share of the
# total (the driver itself keeps a few hundred MiB on some GPUs).
BUSY_SHARE = 0.05


def _bus_devices(facts: Facts) -> list[str]:
    devices = facts.system.display_devices
    if not isinstance(devices, tuple):
        return []
    return [f"{d.slot} {d.vendor} {d.name}" for d in devices if d.nvidia]


def check_driver(facts: Facts) -> list[Finding]:
    nv = facts.nvml
    if not nv.available and family(facts) == MACOS:
        return []  # no NVIDIA driver exists for macOS: platform-limits says so
    devices = facts.system.display_devices
    pci = _bus_devices(facts)
    if nv.available:
        evidence = {
            "driver": shown(nv.driver_version),
            "driver CUDA": shown(nv.cuda_driver_version),
            "GPUs": [f"GPU {g.index}: {shown(g.name)} ({shown(g.uuid)})" for g in nv.gpus],
        }
        if not nv.gpus:
            evidence["NVIDIA devices on the PCI bus"] = pci or shown(devices)
            return [NO_NVIDIA_GPU(case="none-listed", evidence=evidence, severity=Severity.WARN)]
        return [NVIDIA_DRIVER(evidence=evidence, driver=shown(nv.driver_version), cuda=shown(nv.cuda_driver_version),
                              gpus=plural(len(nv.gpus), "GPU"))]
    evidence = {"NVML": nv.error, "NVIDIA devices on the PCI bus": pci or shown(devices) or "none"}
    if nv.error_kind == PYNVML_MISSING:
        return [NVML_ERROR(case="pynvml-missing", evidence=evidence, severity=Severity.WARN, error=nv.error)]
    if nv.error_kind == INIT_FAILED:
        return [NVML_ERROR(case="init-failed", evidence=evidence, error=nv.error)]
    if pci:
        return [NVIDIA_DRIVER_MISSING(evidence=evidence, devices=plural(len(pci), "NVIDIA device"))]
    # A CPU machine: nothing is wrong, nothing to do.
    return [NO_NVIDIA_GPU(case="no-driver", evidence=evidence, no_why=True, no_fix=True, error=nv.error)]


def check_display_adapters(facts: Facts) -> list[Finding]:
    devices = facts.system.display_devices
    if not isinstance(devices, tuple):
        return []
    others = [d for d in devices if not d.nvidia]
    if not others:
        return []
    evidence = {"adapters": [f"{d.slot} {d.vendor} {d.name} ({d.kind})" for d in others], "source": facts.system.display_source}
    return [NON_NVIDIA_DISPLAY_ADAPTER(evidence=evidence, adapters=plural(len(others), "non-NVIDIA display adapter"))]


def _jobs(gpu: NvmlGpu) -> list:
    """The compute processes on a GPU: another job. A graphics process (the display
    server, a desktop's compositor on a workstation's GPU) is not one: it counts only
    through the memory it holds, and is never named as a pid to kill."""
    procs = gpu.processes if isinstance(gpu.processes, tuple) else ()
    return [p for p in procs if p.kind == "compute"]


def _busy(gpu: NvmlGpu) -> bool:
    used, total = gpu.memory_used_bytes, gpu.memory_total_bytes
    heavy = isinstance(used, int) and isinstance(total, int) and total > 0 and used > BUSY_SHARE * total
    return bool(_jobs(gpu)) or heavy


def _process_line(p) -> str:
    return f"pid {p.pid} {shown(p.name)}: {size(p.used_memory_bytes)}"


def check_memory_in_use(facts: Facts) -> list[Finding]:
    gpus = facts.nvml.gpus
    if not gpus:
        return []
    busy = [g for g in gpus if _busy(g)]
    if not busy:
        return [GPU_MEMORY_FREE(evidence={f"GPU {g.index}": f"{size(g.memory_used_bytes)} used of {size(g.memory_total_bytes)}" for g in gpus})]
    evidence = {}
    for g in busy:
        procs = g.processes if isinstance(g.processes, tuple) else ()
        evidence[f"GPU {g.index} ({shown(g.name)})"] = (
            f"{size(g.memory_used_bytes)} used of {size(g.memory_total_bytes)}"
            + ("".join("\n" + _process_line(p) for p in procs) if procs else "")
        )
    pids = sorted({p.pid for g in busy for p in _jobs(g)})
    return [GPU_MEMORY_IN_USE(
        evidence=evidence, fix_case="kill" if pids else "look", gpus=plural(len(busy), "GPU"),
        used=", ".join(f"GPU {g.index} ({size(g.memory_used_bytes)})" for g in busy), pids=" ".join(str(p) for p in pids),
    )]


def check_mig(facts: Facts) -> list[Finding]:
    return mig_findings(facts.nvml.gpus, one_instance(facts))


def one_instance(facts: Facts) -> str:
    """How this process was given a single MIG instance on purpose ("" if it was not):
    torch sees one device, and CUDA_VISIBLE_DEVICES names one MIG instance (what Slurm
    and the Kubernetes device plugin hand a job), or this machine has one GPU."""
    if facts.torch.device_count != 1:
        return ""
    parsed = parse_visible_devices(facts.visible_devices)
    if parsed.kind == "mig" and len(parsed.entries) == 1:
        return f"CUDA_VISIBLE_DEVICES={facts.visible_devices}"
    count = facts.nvml.device_count if isinstance(facts.nvml.device_count, int) else len(facts.nvml.gpus)
    if count == 1 and parsed.kind == "unset":
        return "the one GPU of this machine, and torch sees one device"
    return ""


def mig_findings(gpus: Sequence[NvmlGpu], single: str = "") -> list[Finding]:
    """Also what a pasted nvidia-smi says (commands/diagnose/nvidia_smi.py). `single`: how
    the process was given one MIG instance on purpose (a single-GPU run: nothing to fix)."""
    mig = [g for g in gpus if g.mig_mode == "enabled"]
    if not mig:
        return []
    evidence = {f"GPU {g.index}": f"{shown(g.name)}, MIG {g.mig_mode}" for g in mig}
    gpu_list = ",".join(str(g.index) for g in mig)
    named = ", ".join(f"GPU {g.index}" for g in mig)
    if single:
        evidence["one instance"] = single
        return [MIG_ENABLED(case="one-instance", evidence=evidence, severity=Severity.INFO, named=named, gpus=gpu_list)]
    return [MIG_ENABLED(case="several", evidence=evidence, named=named, gpus=gpu_list)]


def check_p2p(facts: Facts) -> list[Finding]:
    links = facts.nvml.links
    if not links:
        return []
    # NVML's "unknown" (or no answer at all: an old driver, some VMs) says nothing either way:
    # such a pair is neither working nor missing P2P.
    decided = [link for link in links if isinstance(link.p2p_read, str) and link.p2p_read != "unknown"]
    broken = [link for link in decided if link.p2p_read != "ok"]
    evidence = {
        f"GPU {link.a} <-> GPU {link.b}": f"P2P {shown(link.p2p_read)}, topology {shown(link.topology)}, "
        f"NVLinks {shown(link.nvlinks)}"
        for link in links
    }
    if not decided:
        return []
    if not broken:
        if len(decided) < len(links):
            pairs = f"{plural(len(decided), 'GPU pair')} of {len(links)} (NVML gave no P2P status for the others)"
        elif len(links) == 1:
            pairs = f"GPU {links[0].a} and GPU {links[0].b}"
        else:
            pairs = f"all {len(links)} GPU pairs"
        return [P2P_OK(evidence=evidence, pairs=pairs)]
    pairs = ", ".join(f"GPU {link.a} and {link.b} ({shown(link.p2p_read)})" for link in broken)
    return [P2P_UNAVAILABLE(evidence=evidence, pairs=pairs)]


def check_compute_mode(facts: Facts) -> list[Finding]:
    return compute_mode_findings(facts.nvml.gpus)


def compute_mode_findings(gpus: Sequence[NvmlGpu]) -> list[Finding]:
    """Also what a pasted nvidia-smi says (commands/diagnose/nvidia_smi.py)."""
    restricted = [g for g in gpus if isinstance(g.compute_mode, str) and g.compute_mode not in ("Default", "unknown")]
    if not restricted:
        return []
    prohibited = any(g.compute_mode == "Prohibited" for g in restricted)
    return [GPU_COMPUTE_MODE_RESTRICTED(
        evidence={f"GPU {g.index}": g.compute_mode for g in restricted},
        severity=Severity.ERROR if prohibited else Severity.WARN,
        modes=", ".join(f"GPU {g.index} is {g.compute_mode}" for g in restricted),
        gpus=",".join(str(g.index) for g in restricted),
    )]


CHECKS = (check_driver, check_display_adapters, check_memory_in_use, check_mig, check_p2p, check_compute_mode)
