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

from gpudoctor.checks.wording import plural, shown
from gpudoctor.core.findings import Finding, Severity, ok
from gpudoctor.knowledge.xid import xid_findings
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.kernel_log import NOT_READ, KernelLogFacts
from gpudoctor.probe.nvml import ALL_LINKS, LOST, GpuHealth, NvmlFacts, NvmlGpu
from gpudoctor.catalog import fix, why

AREA = "GPU health"
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
    return [Finding(
        "gpu-ecc-uncorrectable",
        Severity.ERROR,
        f"Uncorrectable ECC memory errors since the driver loaded on {_names(bad)}",
        {n: f"volatile uncorrectable {h.ecc_volatile_uncorrected}, corrected {shown(h.ecc_volatile_corrected)}; "
         f"lifetime uncorrectable {shown(h.ecc_aggregate_uncorrected)}" for n, h in bad},
        "An uncorrectable error corrupts the data of the process that read it: the driver stops that process "
        "(its rank dies, the others hang until their timeout), and the GPU is not trustworthy until it is reset.",
        "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER  # then drain the node and reset the GPU when idle: "
        "sudo nvidia-smi -r -i <gpu> (ask the admin); replace it if the errors return",
        area=AREA,
    )]


RECOVERY_FIX = {
    "reset": "sudo nvidia-smi -r -i <gpu>  # when no process uses it (or reboot the node; ask the admin)",
    "drain-and-reset": "drain the node (stop every job on it), then reset the GPU: sudo nvidia-smi -r -i <gpu> (ask the admin)",
    "drain-p2p": "stop the jobs that use peer-to-peer (NCCL) on this GPU, then check again: gpudoctor check",
    "node-reboot": "drain the node and reboot it (ask the admin)",
    "system-reboot": "drain the node and reboot it (ask the admin)",
}


def recovery_needed(gpus: Sequence[GpuLabel]) -> list[Finding]:
    bad = [(n, h) for n, h in gpus if isinstance(h.recovery_action, str) and h.recovery_action != "none"]
    if not bad:
        return []
    action = bad[0][1].recovery_action
    return [Finding(
        "gpu-reset-required",
        Severity.ERROR,
        f"The driver says {_names(bad)} need{'s' if len(bad) == 1 else ''} recovery: "
        + ", ".join(sorted({str(h.recovery_action) for _, h in bad})),
        {n: f"recovery action: {h.recovery_action}" for n, h in bad},
        "After an unrecoverable fault the driver marks the GPU as needing a reset (or a reboot, or a drain): until "
        "then new jobs on it fail or hang, and NVML may refuse to answer for it.",
        RECOVERY_FIX.get(str(action), RECOVERY_FIX["reset"]),
        area=AREA,
    )]


def _yes_no(value: object) -> object:
    return ("yes" if value else "no") if isinstance(value, bool) else shown(value)


def retired_pages_pending(gpus: Sequence[GpuLabel]) -> list[Finding]:
    bad = [(n, h) for n, h in gpus if h.retired_pending is True]
    if not bad:
        return []
    return [Finding(
        "gpu-pages-pending-retirement",
        Severity.ERROR,
        f"Memory pages wait for a GPU reset to be retired on {_names(bad)}",
        {n: f"retired pages: single-bit {shown(h.retired_single_bit)}, double-bit {shown(h.retired_double_bit)}; "
         "pending: yes" for n, h in bad},
        "After a double-bit error the driver marks the page for retirement, but it is only taken out of use at the "
        "next reset; until then new CUDA contexts on the GPU may be refused or land on the bad page.",
        "sudo nvidia-smi -r -i <gpu>  # reset it when no process uses it (or reboot the node; ask the admin)",
        area=AREA,
    )]


def row_remapping(gpus: Sequence[GpuLabel]) -> list[Finding]:
    failed = [(n, h) for n, h in gpus if h.remap_failure is True]
    pending = [(n, h) for n, h in gpus if h.remap_pending is True and h.remap_failure is not True]

    def rows(h: GpuHealth) -> str:
        return (f"remapped rows: correctable {shown(h.remapped_corrected)}, uncorrectable {shown(h.remapped_uncorrected)}; "
                f"pending {_yes_no(h.remap_pending)}; failure {_yes_no(h.remap_failure)}")

    out = []
    if failed:
        out += [Finding(
            "gpu-row-remap-failed",
            Severity.ERROR,
            f"Row remapping failed on {_names(failed)}: the GPU has no spare memory rows left",
            {n: rows(h) for n, h in failed},
            "The GPU could not replace a faulty memory row: memory errors on it will keep stopping jobs. NVIDIA "
            "counts a remapping failure as grounds to replace the GPU.",
            "drain the node and ask the admin to have the GPU replaced  # nvidia-smi -q -d ROW_REMAPPER shows it",
            area=AREA,
        )]
    if pending:
        out += [Finding(
            "gpu-row-remap-pending",
            Severity.WARN,
            f"A memory row remap waits for a GPU reset on {_names(pending)}",
            {n: rows(h) for n, h in pending},
            "An uncorrectable memory error was recorded and its row is replaced at the next GPU reset; until then "
            "the affected memory is kept out of use and jobs keep running, but the same error can stop a job again.",
            "sudo nvidia-smi -r -i <gpu>  # when no job uses it, or reboot the node (ask the admin)",
            area=AREA,
        )]
    return out


def clocks_slowdown(gpus: Sequence[GpuLabel]) -> list[Finding]:
    slow = [(n, h, [r for r in h.clock_events if r in SLOWDOWNS]) for n, h in gpus if isinstance(h.clock_events, tuple)]
    slow = [(n, h, r) for n, h, r in slow if r]
    if not slow:
        return []
    hw = any(r.startswith("HW") for _, _, reasons in slow for r in reasons)
    return [Finding(
        "gpu-clocks-slowdown",
        Severity.WARN,
        f"Clocks held down by {'the hardware' if hw else 'heat'} on {_names([(n, h) for n, h, _ in slow])}: "
        + ", ".join(sorted({r for _, _, rs in slow for r in rs})),
        {n: f"active: {', '.join(h.clock_events)}; temperature {shown(h.temperature_c)} C (slowdown at "  # type: ignore[arg-type]
            f"{shown(h.slowdown_c)} C); power {_watts(h.power_w)} of {_watts(h.power_limit_w)}" for n, h, _ in slow},
        "HW Slowdown cuts the clocks by half or more (heat, the power supply's brake, or a power spike); a slowed "
        "GPU makes its rank the straggler every other rank waits for at each all-reduce.",
        "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER  # check airflow and power cables; ask the admin if it persists",
        area=AREA,
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
    return [Finding(
        "gpu-temperature-high",
        Severity.ERROR if critical else Severity.WARN,
        f"{_names(hot)} {'is' if len(hot) == 1 else 'are'} at the temperature where the GPU slows down"
        + (" or shuts down" if critical else ""),
        {n: f"{h.temperature_c} C; slowdown at {shown(h.slowdown_c)} C, shutdown at {shown(h.shutdown_c)} C, "
            f"max operating {shown(h.max_operating_c)} C" for n, h in hot},
        "At its max operating temperature, and more so at the slowdown threshold, the GPU lowers its clocks "
        "(its rank becomes the straggler); at the shutdown threshold it turns off and the job dies.",
        "nvidia-smi -q -d TEMPERATURE,PERFORMANCE  # check the fans and airflow of the node; ask the admin",
        area=AREA,
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
    return [Finding(
        "gpu-power-capped",
        Severity.WARN,
        f"Power limit set below the default on {_names(capped)}",
        {n: f"limit {_watts(h.power_limit_w)} (default {_watts(h.default_power_limit_w)}); drawing {_watts(h.power_w)}" for n, h in capped},
        "A lowered power limit lowers the clocks under load: that GPU's rank runs slower than the others and "
        "every all-reduce waits for it.",
        "nvidia-smi -q -d POWER  # ask the admin to restore it: sudo nvidia-smi -i <gpu> -pl <default watts>",
        area=AREA,
    )]


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
    what = []
    if narrow:
        what.append("trained narrower than it can (" + _names(narrow) + ")")
    if replays:
        what.append(f"resending packets ({_names(replays)}: {PCIE_REPLAYS}+ replays)")
    return [Finding(
        "gpu-pcie-link-degraded",
        Severity.WARN,
        "PCIe link " + " and ".join(what),
        evidence,
        "A GPU whose PCIe link came up at x8 instead of x16 moves data to and from the host (and, without NVLink, "
        "to the other GPUs) at half the speed; many replays mean a bad slot, riser or cable. The generation drops "
        "at idle to save power, so only the width is judged.",
        "nvidia-smi -q -d PCI  # a narrow link or many replays: ask the admin to reseat the GPU or its riser",
        area=AREA,
    )]


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
    return [Finding(
        "gpu-nvlink-degraded",
        Severity.WARN,
        f"NVLink trouble on {', '.join(n.split(' (')[0] for n in bad)}",
        bad,
        "A link down makes NCCL send that GPU's traffic over fewer links or PCIe (all-reduce slows for every rank; "
        "with every link down on an NVSwitch system, NCCL may hang); a link that needed recovery stalled its "
        "traffic and may fail (Xid 74).",
        "nvidia-smi nvlink -s; nvidia-smi nvlink -e  # then ask the admin to reset the GPUs or inspect the NVLink bridge / NVSwitch",
        area=AREA,
    )]


def persistence(gpus: Sequence[GpuLabel]) -> list[Finding]:
    off = [(n, h) for n, h in gpus if h.persistence_mode == "disabled"]
    if not off:
        return []
    return [Finding(
        "gpu-persistence-off",
        Severity.INFO,
        f"Persistence mode is off on {plural(len(off), 'GPU')}",
        {n: "persistence mode disabled" for n, _ in off},
        "Without persistence mode the driver tears the GPU's state down whenever no process uses it, so every "
        "job start pays the initialisation again (seconds per GPU) and the ranks start unevenly.",
        "sudo nvidia-smi -pm 1  # or run nvidia-persistenced (ask the admin)",
        area=AREA,
    )]


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
    return [Finding(
        "gpu-lost",
        Severity.ERROR,
        f"NVML counts {shown(nvml.device_count)} GPUs but cannot reach "
        + ", ".join(f"GPU {u.index} ({u.reason})" for u in lost),
        {**{f"GPU {u.index}": f"nvmlDeviceGetHandleByIndex({u.index}): {u.reason}" for u in lost},
         "NVML device count": shown(nvml.device_count)},
        why("gpu-lost"),
        fix("gpu-lost"),
        area=AREA,
    )]


def check_gpu_health(facts: Facts) -> list[Finding]:
    gpus = _read(facts.nvml.gpus)
    lost = lost_gpus(facts.nvml)
    if not gpus:
        return lost
    found = lost + health_findings(gpus, peers_expected(facts.nvml))
    if any(f.severity in (Severity.WARN, Severity.ERROR) for f in found):
        return found
    summary = {name: _summary(h) for name, h in gpus}
    return [ok("gpu-health-ok", f"No memory errors, slowdowns or degraded links on {plural(len(gpus), 'GPU')}", AREA, **summary), *found]


def _summary(h: GpuHealth) -> str:
    return (f"ECC {shown(h.ecc_mode)}, uncorrectable {shown(h.ecc_volatile_uncorrected)}; "
            f"{shown(h.temperature_c)} C; PCIe gen {shown(h.pcie_gen)}/{shown(h.pcie_max_gen)} "
            f"x{shown(h.pcie_width)}/x{shown(h.pcie_max_width)}; clocks: {', '.join(h.clock_events) if isinstance(h.clock_events, tuple) else shown(h.clock_events)}")


def check_xid_events(facts: Facts) -> list[Finding]:
    log = facts.kernel_log
    if not isinstance(log, KernelLogFacts):
        if not facts.nvml.gpus or log == NOT_READ:
            return []  # no GPU (nothing to say about its faults), or a snapshot that did not read the log
        return [Finding(
            id="kernel-log-unreadable",
            severity=Severity.INFO,
            title="Cannot read the kernel log, so GPU faults (Xid lines) of this boot are unknown",
            evidence={"tried": log.reason},
            why=why("kernel-log-unreadable"),
            fix=fix("kernel-log-unreadable"),
            area=AREA,
        )]
    return xid_findings(log.xids, log.source, AREA)


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
