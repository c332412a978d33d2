"""GPU health: the hardware state that makes one rank crash, hang or crawl while
the code is fine. Memory errors (ECC, retired pages, row remapping), clocks held
down, heat, a power cap, a PCIe link trained narrow, NVLinks down or erroring,
and the driver's Xid lines. Each is a finding only when it matters for a training
job, with what the user (or the admin) can do about it.

`health_findings` judges GPUs given as (label, GpuHealth) pairs, so a pasted
`nvidia-smi -q` (commands/diagnose/nvidia_smi.py) is judged by the same code as NVML's
answers here. Thresholds live here, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeGuard

from gpudoctor.catalog.findings.gpu_health import (
    GPU_CLOCKS_SLOWDOWN,
    GPU_ECC_UNCORRECTABLE,
    GPU_HEALTH_OK,
    GPU_LOST,
    GPU_NVLINK_DEGRADED,
    GPU_PAGES_PENDING_RETIREMENT,
    GPU_PCIE_LINK_DEGRADED,
    GPU_PERSISTENCE_OFF,
    GPU_POWER_CAPPED,
    GPU_RESET_REQUIRED,
    GPU_ROW_REMAP_FAILED,
    GPU_ROW_REMAP_PENDING,
    GPU_TEMPERATURE_HIGH,
    KERNEL_LOG_UNREADABLE,
)
from gpudoctor.checks.wording import plural, shown
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.xid import xid_findings
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.kernel_log import NOT_READ, KernelLogFacts
from gpudoctor.probe.nvml import ALL_LINKS, LOST, GpuHealth, NvmlFacts, NvmlGpu

# Clock event reasons that mean the hardware, not the workload, holds the clocks
# down: HW Slowdown halves the clocks or more (nvml.h). SW Power Cap is a GPU at its
# power limit under load, normal; Idle, Sync Boost and the settings ones are not faults.
SLOWDOWNS = ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown", "SW Thermal Slowdown")
HOT_MARGIN_C = 5  # this close to the slowdown threshold, the next hot step slows the GPU
# The max operating temperature is a target the GPU holds by lowering its clocks: within this of it,
# it is already doing so (laptops and workstations set it far below the slowdown threshold)
AT_TARGET_C = 2
POWER_CAP_SHARE = 0.9  # an enforced limit below this share of the default is a cap someone set
# PCIe replays since the driver loaded: a few happen on healthy links; a flaky riser or
# slot resends thousands of packets (DCGM's diagnostics fail a link at 8 per minute).
PCIE_REPLAYS = 1000
# GPUs sold only as SXM / HGX modules are always wired to NVLink (or an NVSwitch): every
# link down is a fault. A PCIe card reports its links down when no bridge is fitted.
SXM_ONLY = re.compile(r"SXM|HBM3|\bH200\b(?! NVL)|\bG?B[23]00\b")

GpuLabel = tuple[str, GpuHealth]
Judge = Callable[[Sequence[GpuLabel]], list[Finding]]


def label(gpu: NvmlGpu) -> str:
    return f"GPU {gpu.index} ({shown(gpu.name)}, {shown(gpu.pci_bus_id)})"


def _is_int(value: object) -> TypeGuard[int]:
    """A reading NVML gave (a number), not an Unavailable; a bool is not one either."""
    return isinstance(value, int) and not isinstance(value, bool)


def _names(gpus: Sequence[GpuLabel]) -> str:
    return ", ".join(name.split(" (")[0] for name, _ in gpus)


def ecc_uncorrectable(gpus: Sequence[GpuLabel]) -> list[Finding]:
    bad = [(n, h) for n, h in gpus if _is_int(h.ecc_volatile_uncorrected) and h.ecc_volatile_uncorrected > 0]
    if not bad:
        return []
    evidence = {n: f"volatile uncorrectable {h.ecc_volatile_uncorrected}, corrected {shown(h.ecc_volatile_corrected)}; "
                f"lifetime uncorrectable {shown(h.ecc_aggregate_uncorrected)}" for n, h in bad}
    return [GPU_ECC_UNCORRECTABLE(evidence=evidence, gpus=_names(bad))]


def recovery_needed(gpus: Sequence[GpuLabel]) -> list[Finding]:
    bad = [(n, h) for n, h in gpus if isinstance(h.recovery_action, str) and h.recovery_action != "none"]
    if not bad:
        return []
    action = str(bad[0][1].recovery_action)  # the fix is the first GPU's action; one the kind has no fix for is a reset
    return [GPU_RESET_REQUIRED(
        evidence={n: f"recovery action: {h.recovery_action}" for n, h in bad},
        fix_case=action if action in GPU_RESET_REQUIRED.texts("fix") else "reset",
        gpus=_names(bad), needs="needs" if len(bad) == 1 else "need", actions=", ".join(sorted({str(h.recovery_action) for _, h in bad})),
    )]


def _yes_no(value: object) -> object:
    return ("yes" if value else "no") if isinstance(value, bool) else shown(value)


def retired_pages_pending(gpus: Sequence[GpuLabel]) -> list[Finding]:
    bad = [(n, h) for n, h in gpus if h.retired_pending is True]
    if not bad:
        return []
    evidence = {n: f"retired pages: single-bit {shown(h.retired_single_bit)}, double-bit {shown(h.retired_double_bit)}; "
                "pending: yes" for n, h in bad}
    return [GPU_PAGES_PENDING_RETIREMENT(evidence=evidence, gpus=_names(bad))]


def row_remapping(gpus: Sequence[GpuLabel]) -> list[Finding]:
    failed = [(n, h) for n, h in gpus if h.remap_failure is True]
    pending = [(n, h) for n, h in gpus if h.remap_pending is True and h.remap_failure is not True]

    def rows(h: GpuHealth) -> str:
        return (f"remapped rows: correctable {shown(h.remapped_corrected)}, uncorrectable {shown(h.remapped_uncorrected)}; "
                f"pending {_yes_no(h.remap_pending)}; failure {_yes_no(h.remap_failure)}")

    out = []
    if failed:
        out.append(GPU_ROW_REMAP_FAILED(evidence={n: rows(h) for n, h in failed}, gpus=_names(failed)))
    if pending:
        out.append(GPU_ROW_REMAP_PENDING(evidence={n: rows(h) for n, h in pending}, gpus=_names(pending)))
    return out


def clocks_slowdown(gpus: Sequence[GpuLabel]) -> list[Finding]:
    slow = [(n, h, [r for r in h.clock_events if r in SLOWDOWNS]) for n, h in gpus if isinstance(h.clock_events, tuple)]
    slow = [(n, h, r) for n, h, r in slow if r]
    if not slow:
        return []
    hw = any(r.startswith("HW") for _, _, reasons in slow for r in reasons)
    # every active reason, not only the slowdowns (`slow` holds GPUs whose clock_events is a tuple)
    evidence = {n: f"active: {', '.join(h.clock_events if isinstance(h.clock_events, tuple) else ())}; temperature {shown(h.temperature_c)} C (slowdown at "
                f"{shown(h.slowdown_c)} C); power {_watts(h.power_w)} of {_watts(h.power_limit_w)}" for n, h, _ in slow}
    return [GPU_CLOCKS_SLOWDOWN(
        case="hardware" if hw else "heat", evidence=evidence,
        gpus=_names([(n, h) for n, h, _ in slow]), reasons=", ".join(sorted({r for _, _, rs in slow for r in rs})),
    )]


def _watts(value: object) -> str:
    return f"{value:.0f} W" if isinstance(value, float) else shown(value)


def _hot(h: GpuHealth) -> bool:
    t = h.temperature_c
    if not isinstance(t, int):
        return False
    limits = [(h.shutdown_c, HOT_MARGIN_C), (h.slowdown_c, HOT_MARGIN_C), (h.max_operating_c, AT_TARGET_C)]
    return any(isinstance(limit, int) and t >= limit - margin for limit, margin in limits)


def temperature(gpus: Sequence[GpuLabel]) -> list[Finding]:
    hot = [(n, h) for n, h in gpus if _hot(h)]
    if not hot:
        return []
    critical = any(_is_int(h.temperature_c) and _is_int(h.shutdown_c) and h.temperature_c >= h.shutdown_c - HOT_MARGIN_C for _, h in hot)
    evidence = {n: f"{h.temperature_c} C; slowdown at {shown(h.slowdown_c)} C, shutdown at {shown(h.shutdown_c)} C, "
                f"max operating {shown(h.max_operating_c)} C" for n, h in hot}
    return [GPU_TEMPERATURE_HIGH(
        case="shutdown" if critical else "slowdown", evidence=evidence, severity=Severity.ERROR if critical else Severity.WARN,
        gpus=_names(hot), are="is" if len(hot) == 1 else "are",
    )]


def power_cap(gpus: Sequence[GpuLabel]) -> list[Finding]:
    capped = [
        (n, h)
        for n, h in gpus
        if isinstance(h.power_limit_w, float) and isinstance(h.default_power_limit_w, float)
        and h.default_power_limit_w > 0 and h.power_limit_w < POWER_CAP_SHARE * h.default_power_limit_w
    ]
    if not capped:
        return []
    evidence = {n: f"limit {_watts(h.power_limit_w)} (default {_watts(h.default_power_limit_w)}); drawing {_watts(h.power_w)}"
                for n, h in capped}
    return [GPU_POWER_CAPPED(evidence=evidence, gpus=_names(capped))]


def pcie_link(gpus: Sequence[GpuLabel]) -> list[Finding]:
    narrow = [(n, h) for n, h in gpus if _is_int(h.pcie_width) and _is_int(h.pcie_max_width) and h.pcie_width < h.pcie_max_width]
    replays = [(n, h) for n, h in gpus if _is_int(h.pcie_replays) and h.pcie_replays >= PCIE_REPLAYS]
    bad = list(dict.fromkeys([n for n, _ in narrow] + [n for n, _ in replays]))
    if not bad:
        return []
    by_name = dict(gpus)
    evidence = {
        n: f"gen {shown(by_name[n].pcie_gen)} of {shown(by_name[n].pcie_max_gen)}, width x{shown(by_name[n].pcie_width)} "
        f"of x{shown(by_name[n].pcie_max_width)}; replays {shown(by_name[n].pcie_replays)}"
        for n in bad
    }
    case = "narrow-and-replays" if narrow and replays else "narrow" if narrow else "replays"
    return [GPU_PCIE_LINK_DEGRADED(case=case, evidence=evidence, narrow=_names(narrow), replays=_names(replays), limit=PCIE_REPLAYS)]


def peers_expected(nvml: NvmlFacts) -> bool:
    """Whether an NVLink of this machine's GPUs has anything to reach: NVML counts another
    GPU. A single-GPU VM of an SXM part (one H100/H200/B200 passed through) has every
    link down, and that is no fault."""
    count = nvml.device_count if isinstance(nvml.device_count, int) else len(nvml.gpus)
    return count > 1


def nvlinks(gpus: Sequence[GpuLabel], peers: bool = True) -> list[Finding]:
    """Links down where links are expected: some of a GPU's links up and others down, or
    every link down on an SXM part that has another GPU to reach (`peers`)."""
    bad = {}
    for n, h in gpus:
        if not isinstance(h.nvlinks, tuple) or not h.nvlinks:
            continue
        active = [link for link in h.nvlinks if link.active]
        down = [link.link for link in h.nvlinks if not link.active]
        recovering = [link for link in h.nvlinks if _is_int(link.recovery) and link.recovery > 0]
        problems = []
        if active and down:  # some links up, some down: a link failed
            problems.append(f"links {', '.join(map(str, down))} down, {len(active)} up")
        elif down and peers and SXM_ONLY.search(n):  # every link down on a GPU that is always NVLink-connected
            problems.append("every NVLink down" + ("" if ALL_LINKS in down else f" ({len(down)} links)"))
        if recovering:
            problems.append("recovery errors on links " + ", ".join(f"{link.link} ({link.recovery})" for link in recovering))
        if problems:
            bad[n] = "; ".join(problems)
    if not bad:
        return []
    return [GPU_NVLINK_DEGRADED(evidence=bad, gpus=", ".join(n.split(" (")[0] for n in bad))]


def persistence(gpus: Sequence[GpuLabel]) -> list[Finding]:
    off = [(n, h) for n, h in gpus if h.persistence_mode == "disabled"]
    if not off:
        return []
    return [GPU_PERSISTENCE_OFF(evidence={n: "persistence mode disabled" for n, _ in off}, gpus=plural(len(off), "GPU"))]


JUDGES: tuple[Judge, ...] = (
    recovery_needed, ecc_uncorrectable, retired_pages_pending, row_remapping, clocks_slowdown,
    temperature, power_cap, pcie_link, nvlinks, persistence,
)


def health_findings(gpus: Sequence[GpuLabel], peers: bool = True) -> list[Finding]:
    """Every health finding for these GPUs; [] when all is well. `peers`: the machine has
    more than one GPU (what NVLink links are for)."""
    out: list[Finding] = []
    for judge in JUDGES:
        out += nvlinks(gpus, peers) if judge is nvlinks else judge(gpus)
    return out


def _read(gpus: Sequence[NvmlGpu]) -> list[GpuLabel]:
    return [(label(g), g.health) for g in gpus if isinstance(g.health, GpuHealth)]


def lost_gpus(nvml: NvmlFacts) -> list[Finding]:
    """GPUs NVML counts but cannot open (not for want of permission: those are another job's)."""
    lost = [u for u in nvml.unreachable if u.kind == LOST]
    if not lost:
        return []
    evidence = {**{f"GPU {u.index}": f"nvmlDeviceGetHandleByIndex({u.index}): {u.reason}" for u in lost},
                "NVML device count": shown(nvml.device_count)}
    return [GPU_LOST(case="nvml", evidence=evidence, count=shown(nvml.device_count),
                     lost=", ".join(f"GPU {u.index} ({u.reason})" for u in lost))]


def check_gpu_health(facts: Facts) -> list[Finding]:
    gpus = _read(facts.nvml.gpus)
    lost = lost_gpus(facts.nvml)
    if not gpus:
        return lost
    found = lost + health_findings(gpus, peers_expected(facts.nvml))
    if any(f.severity in (Severity.WARN, Severity.ERROR) for f in found):
        return found
    summary = {name: _summary(h) for name, h in gpus}
    return [GPU_HEALTH_OK(evidence=summary, gpus=plural(len(gpus), "GPU")), *found]


def _summary(h: GpuHealth) -> str:
    return (f"ECC {shown(h.ecc_mode)}, uncorrectable {shown(h.ecc_volatile_uncorrected)}; "
            f"{shown(h.temperature_c)} C; PCIe gen {shown(h.pcie_gen)}/{shown(h.pcie_max_gen)} "
            f"x{shown(h.pcie_width)}/x{shown(h.pcie_max_width)}; clocks: {', '.join(h.clock_events) if isinstance(h.clock_events, tuple) else shown(h.clock_events)}")


def check_xid_events(facts: Facts) -> list[Finding]:
    log = facts.kernel_log
    if not isinstance(log, KernelLogFacts):
        if not facts.nvml.gpus or log == NOT_READ:
            return []  # no GPU (nothing to say about its faults), or a snapshot that did not read the log
        return [KERNEL_LOG_UNREADABLE(evidence={"tried": log.reason})]
    return xid_findings(log.xids, log.source)


CHECKS = (check_gpu_health, check_xid_events)


# How each health problem reads in the fleet table's "GPU health" cell.
SHORT = {
    "gpu-lost": "lost",
    "gpu-reset-required": "needs a reset",
    "gpu-ecc-uncorrectable": "uncorrectable ECC",
    "gpu-pages-pending-retirement": "pages pending retirement",
    "gpu-row-remap-failed": "row remap failed",
    "gpu-row-remap-pending": "row remap pending",
    "gpu-clocks-slowdown": "clocks slowed",
    "gpu-temperature-high": "hot",
    "gpu-power-capped": "power capped",
    "gpu-pcie-link-degraded": "PCIe degraded",
    "gpu-nvlink-degraded": "NVLink degraded",
}


def health_summary(facts: Facts) -> tuple[str, Severity] | None:
    """One node's GPU health as a table cell ("ok", "row remap pending (GPU 3); Xid 79")
    and its worst severity; None when nothing about it could be read."""
    gpus = _read(facts.nvml.gpus)
    log = facts.kernel_log
    if not gpus and not isinstance(log, KernelLogFacts):
        return None
    problems = [f for f in lost_gpus(facts.nvml) + health_findings(gpus, peers_expected(facts.nvml))
                if f.severity in (Severity.WARN, Severity.ERROR)]
    parts = [f"{SHORT.get(f.id, f.id)} ({', '.join(k.split(' (')[0] for k in f.evidence if k.startswith('GPU'))})"
             for f in problems]
    xids = [f for f in (xid_findings(log.xids, log.source) if isinstance(log, KernelLogFacts) else [])
            if f.severity in (Severity.WARN, Severity.ERROR)]
    if xids and isinstance(log, KernelLogFacts):
        numbers = sorted({e.xid for e in log.xids})
        parts.append("Xid " + ", ".join(map(str, numbers)))
    worst = max((f.severity for f in problems + xids), key=lambda s: s.rank, default=Severity.OK)
    return ("; ".join(parts) or "ok"), worst
