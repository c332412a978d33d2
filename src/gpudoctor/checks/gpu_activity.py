"""What one nvidia-smi snapshot shows GPUs doing: ranks spinning in a collective, a rank
idle beside its busy peers, GPUs nobody uses, memory piled on one GPU, memory no process
holds. A snapshot is not a run's log: each reading is a signature with its margin, a
warning where the snapshot alone makes a fault likely and info where it does not decide
(the finding says what would). The margins live here, once.

The facts come from a pasted table (commands/diagnose/nvidia_smi.py); the checks are pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.catalog.findings.gpu_health import (
    GPU_COLLECTIVE_SPIN,
    GPU_JOB_IDLE,
    GPU_MEMORY_UNEVEN,
    GPU_MEMORY_WITHOUT_PROCESS,
    GPU_NOT_USED,
    GPU_PROCESS_ON_EVERY_GPU,
    GPU_RANK_IDLE,
    GPU_UNUSED,
)
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.knowledge.gpus_unused import cannot_reach
from gpudoctor.probe.nvml import NOT_SHOWN

# NCCL's waiting kernel counts as 100 % utilisation; a GPU that computes at full
# utilisation draws 60-100 % of its cap, one that spins about what it draws idle in P0
# (V100 ~70 of 300 W, H100 ~120 of 700 W). The nearest healthy paste we hold, GTX 1080 Ti
# training at 100 % on 79-90 of 250 W (32-36 %), sits in the info band; so does a small card
# whose idle draw is a large share of its cap (a T4 idles near 30 of 70 W).
BUSY_PCT = 90
SPIN_SHARE = 0.30  # under this share of the cap at BUSY_PCT: spinning (warn)
LIGHT_SHARE = 0.60  # under this: light kernels or spinning, not decided (info)
WORKING_PCT = 50  # a GPU that works
IDLE_PCT = 5  # a GPU that does not
JOB_MIB = 1024  # a rank's memory: weights and activations, more than a bare CUDA context
SAME_JOB = 0.10  # memory within this share of each other: ranks of one job
EMPTY_MIB = 100  # under this no process has a context on the GPU (a context is 150+ MiB)
UNEVEN = 1.5  # one GPU holding this many times another's memory
FULL_SHARE = 0.95  # this full, the next batch or GPU runs it out of memory
# A GPU shown at 0 % that draws LIGHT_SHARE of its cap or more is computing all the same: GPU-Util is the share of the
# last sample period a kernel ran, power is what the card draws now, and an idle card draws a small share of its cap
# (heldout12's xstead/ethereum-miner-monitor#5: four GTX 1070s mining, each at 98-101 W of 100 W and 2.5 GB, GPU-Util
# 100 % on GPU 0 and 0 % on the others; a rank gone idle beside its peers draws what it draws idle, DeepSpeed#2069's
# V100 at 0 % on 58 of 300 W).
WORKING_DRAW = LIGHT_SHARE


@dataclass(frozen=True)
class ProcessUse:
    gpu: int  # nvidia-smi's index
    pid: int
    name: str  # "Unknown Error" where nvidia-smi could not read it
    memory_mib: int | Unavailable = NOT_SHOWN


@dataclass(frozen=True)
class GpuActivity:
    """One GPU as a snapshot of nvidia-smi's table shows it."""

    label: str  # "GPU 1 (Tesla V100-SXM2..., 00000000:1C:00.0)"
    index: int
    utilisation_pct: int | Unavailable = NOT_SHOWN
    memory_used_mib: int | Unavailable = NOT_SHOWN
    memory_total_mib: int | Unavailable = NOT_SHOWN
    power_w: float | Unavailable = NOT_SHOWN
    power_cap_w: float | Unavailable = NOT_SHOWN
    readings: int = 1  # how many of the input's snapshots read this GPU (a table pasted twice, a minute apart)


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _short(g: GpuActivity) -> str:
    return g.label.split(" (")[0]


def _names(gpus: Sequence[GpuActivity]) -> str:
    return ", ".join(_short(g) for g in gpus)


def _figures(g: GpuActivity) -> str:
    parts = [f"{g.utilisation_pct} %" if _num(g.utilisation_pct) is not None else "utilisation not shown"]
    if _num(g.power_w) is not None and _num(g.power_cap_w):
        parts.append(f"{g.power_w:g} W of {g.power_cap_w:g} W")
    if _num(g.memory_used_mib) is not None:
        parts.append(f"{g.memory_used_mib} MiB" + (f" of {g.memory_total_mib} MiB" if _num(g.memory_total_mib) else ""))
    return ", ".join(parts)


def _span(values: list[float], unit: str) -> str:
    low, high = min(values), max(values)
    return f"{low:.0f}{unit}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}{unit}"


def _util(g: GpuActivity) -> float | None:
    return _num(g.utilisation_pct)


def _mem(g: GpuActivity) -> float | None:
    return _num(g.memory_used_mib)


def _share(g: GpuActivity) -> float | None:
    power, cap = _num(g.power_w), _num(g.power_cap_w)
    return power / cap if power is not None and cap else None


def collective_spin(gpus: Sequence[GpuActivity], hang_said: bool = False) -> list[Finding]:
    """GPUs at BUSY_PCT or more drawing under SPIN_SHARE of their cap (warn), or under LIGHT_SHARE (info). Under SPIN_SHARE
    in one snapshot alone (no GPU read twice, and `hang_said` false: the input does not say the run hangs), one instant
    that a run between two steps reads the same: info, case "snapshot", with what decides it."""
    out = []
    for case, low, high, severity in (("likely", 0.0, SPIN_SHARE, Severity.WARN), ("maybe", SPIN_SHARE, LIGHT_SHARE, Severity.INFO)):
        hit = [g for g in gpus if (_util(g) or 0) >= BUSY_PCT and (s := _share(g)) is not None and low <= s < high]
        if not hit:
            continue
        if case == "likely" and not hang_said and all(g.readings < 2 for g in hit):
            case, severity = "snapshot", Severity.INFO
        shares = [_share(g) or 0.0 for g in hit]
        out.append(GPU_COLLECTIVE_SPIN(
            case=case, severity=severity, evidence={_short(g): _figures(g) for g in hit},
            gpus=_names(hit), util=_span([_util(g) or 0.0 for g in hit], " %"), share=_span([100 * s for s in shares], " %"),
        ))
        break  # the likelier reading says it
    return out


def _owners(processes: Sequence[ProcessUse] | Unavailable, gpu: GpuActivity) -> set[str]:
    """The names (commands or users) of the processes listed on a GPU that hold memory; empty when none are shown."""
    if isinstance(processes, Unavailable):
        return set()
    return {p.name for p in processes if p.gpu == gpu.index and (_num(p.memory_mib) or 0) >= EMPTY_MIB}


def _same_job(a: GpuActivity, b: GpuActivity, processes: Sequence[ProcessUse] | Unavailable) -> bool:
    """Memory within SAME_JOB of each other, and no process list that names different owners."""
    close = abs((_mem(a) or 0) - (_mem(b) or 0)) <= SAME_JOB * max(_mem(a) or 0, _mem(b) or 0)
    owners_a, owners_b = _owners(processes, a), _owners(processes, b)
    return close and (not owners_a or not owners_b or bool(owners_a & owners_b))


def rank_idle(gpus: Sequence[GpuActivity], processes: Sequence[ProcessUse] | Unavailable = NOT_SHOWN,
              hang_said: bool = False) -> list[Finding]:
    """An idle GPU holding the same memory (one job) as a GPU that works; not one whose power draw says it computes
    (WORKING_DRAW). Warn where `hang_said` (the input says the run hangs) or the idle GPU was read more than once; info,
    case "snapshot", in one snapshot alone."""
    held = [g for g in gpus if (_mem(g) or 0) >= JOB_MIB and _util(g) is not None]
    busy = [g for g in held if (_util(g) or 0) >= WORKING_PCT]
    idle = [g for g in held if (_util(g) or 0) <= IDLE_PCT and (_share(g) or 0.0) < WORKING_DRAW
            and any(_same_job(g, b, processes) for b in busy)]
    if not idle:
        return []
    peers = [b for b in busy if any(_same_job(i, b, processes) for i in idle)]
    one, many = len(idle) == 1, len(peers) == 1
    alone = not hang_said and all(g.readings < 2 for g in idle)  # one instant: a rank between two steps reads the same
    return [GPU_RANK_IDLE(
        case="snapshot" if alone else "stopped", severity=Severity.INFO if alone else Severity.WARN,
        evidence={_short(g): _figures(g) for g in idle + peers},
        idle=_names(idle), busy=_names(peers), holds="holds" if one else "hold", are="is" if one else "are",
        works="works" if many else "work",
    )]


def unused(gpus: Sequence[GpuActivity]) -> list[Finding]:
    """GPUs with no process's memory, idle, while another works: info (one GPU by design looks the same)."""
    busy = [g for g in gpus if (_util(g) or 0) >= WORKING_PCT]
    empty = [g for g in gpus if _util(g) is not None and (_util(g) or 0) <= IDLE_PCT and _mem(g) is not None and (_mem(g) or 0) < EMPTY_MIB]
    if not busy or not empty:
        return []
    one = len(empty) == 1
    return [GPU_UNUSED(
        evidence={_short(g): _figures(g) for g in busy + empty},
        busy=_names(busy), count=len(gpus), works="works" if len(busy) == 1 else "work", idle=_names(empty),
        holds="holds" if one else "hold", them="it" if one else "them",
    )]


def not_used(gpus: Sequence[GpuActivity], said: str = "") -> list[Finding]:
    """Every GPU shown idle and none holding a job's memory: no job on them in this snapshot (info: a snapshot taken
    while the job runs decides, and one pasted to show the machine looks the same). Written from heldout7's and heldout11's
    pastes of a job that did not use its GPU, with this module's margins; it read heldout16's (issue 35, diagB17).
    Warn, case "said", where `said` is the reporter's sentence that the job does not use the GPU (issue 35, diagA22:
    heldout11's "# GPU usage is 0", heldout16's "why clstmocrtrain is not running on GPU?"): the snapshot is then the
    job's, taken while it runs as the reporter describes."""
    if not gpus or any(_util(g) is None or _mem(g) is None for g in gpus):
        return []
    if any((_util(g) or 0) > IDLE_PCT or (_mem(g) or 0) >= JOB_MIB for g in gpus):
        return []
    one = len(gpus) == 1
    return [GPU_NOT_USED(
        case="said" if said else "snapshot", severity=Severity.WARN if said else Severity.INFO,
        evidence={_short(g): _figures(g) for g in gpus} | ({"the reporter says": said} if said else {}), gpus=_names(gpus), are="is" if one else "are",
        hold="holds" if one else "hold", them="it" if one else "them", show="shows" if one else "show",
    )]


def job_idle(gpus: Sequence[GpuActivity], said: str = "") -> list[Finding]:
    """Every GPU shown idle while one or more hold a job's memory, beside the reporter's sentence that the GPU's
    utilisation stays at 0 or the job does not use it (`said`): the job is on the GPU and the GPU waits (warn). Without
    the sentence nothing: one snapshot of a job between two steps reads the same. Written from heldout24's
    pytorch/examples#470 ("the Volatile GPU-Util is always 0": 9584 MiB at 0 %) and heldout11's PixelLink#135 (6671 MiB
    at 0 %), issue 35, diagB25."""
    if not said or not gpus or any(_util(g) is None or _mem(g) is None for g in gpus):
        return []
    if any((_util(g) or 0) > IDLE_PCT for g in gpus):
        return []
    if cannot_reach(said):
        # "the container can't use the GPU" (google-deepmind/alphafold3#82: 15734 MiB on GPU 0 of two, no process list):
        # the job never reached a GPU, so the memory shown is not shown to be its own (issue 35, diagB30)
        return []
    held = [g for g in gpus if (_mem(g) or 0) >= JOB_MIB]
    if not held:
        return []  # (no job's memory either: gpu-not-used)
    one = len(held) == 1
    return [GPU_JOB_IDLE(
        evidence={_short(g): _figures(g) for g in held} | {"the reporter says": said},
        gpus=_names(held), hold="holds" if one else "hold", compute="computes" if one else "compute",
        util=", ".join(f"{_util(g):g} %" for g in held),
    )]


def memory_uneven(gpus: Sequence[GpuActivity]) -> list[Finding]:
    """Among GPUs that work, one holding UNEVEN times another's memory; warn when it is FULL_SHARE full."""
    busy = [g for g in gpus if (_util(g) or 0) >= WORKING_PCT and (_mem(g) or 0) >= JOB_MIB]
    if len(busy) < 2:
        return []
    big = max(busy, key=lambda g: _mem(g) or 0)
    small = [g for g in busy if g is not big and (_mem(big) or 0) >= UNEVEN * (_mem(g) or 0)]
    if not small:
        return []
    total = _num(big.memory_total_mib)
    full = bool(total) and (_mem(big) or 0) >= FULL_SHARE * (total or 1)
    ratio = (_mem(big) or 0) / min(_mem(g) or 1 for g in small)
    return [GPU_MEMORY_UNEVEN(
        case="full" if full else "fits", severity=Severity.WARN if full else Severity.INFO,
        evidence={_short(g): _figures(g) for g in [big] + small},
        big=_short(big), others=_names(small), hold="holds" if len(small) == 1 else "hold", ratio=f"{ratio:.1f}",
        used=f"{big.memory_used_mib} of {big.memory_total_mib} MiB" if total else f"{big.memory_used_mib} MiB",
    )]


def memory_without_process(gpus: Sequence[GpuActivity], processes: Sequence[ProcessUse] | Unavailable) -> list[Finding]:
    """Memory no nameable process holds, where the snapshot shows its process list."""
    if isinstance(processes, Unavailable):
        return []  # cut before its process list: nothing to compare
    unnamed = sorted({p.gpu for p in processes if p.name.lower() == "unknown error" and (_num(p.memory_mib) or 0) >= EMPTY_MIB})
    listed = {p.gpu for p in processes}
    bare = [g for g in gpus if (_mem(g) or 0) >= EMPTY_MIB and g.index not in listed]
    by_index = {g.index: g for g in gpus}
    if unnamed:
        evidence = {f"GPU {i}": [f"pid {p.pid}: {p.name}, {p.memory_mib} MiB" for p in processes if p.gpu == i] for i in unnamed}
        return [GPU_MEMORY_WITHOUT_PROCESS(case="unnamed", evidence=evidence, gpus=", ".join(_short(by_index[i]) if i in by_index else f"GPU {i}" for i in unnamed))]
    if not bare:
        return []
    case, severity = ("unlisted", Severity.WARN) if processes else ("none-listed", Severity.INFO)
    return [GPU_MEMORY_WITHOUT_PROCESS(
        case=case, severity=severity, evidence={_short(g): _figures(g) + ", no process listed" for g in bare},
        gpus=_names(bare), hold="holds" if len(bare) == 1 else "hold",
    )]


def process_on_every_gpu(processes: Sequence[ProcessUse] | Unavailable) -> list[Finding]:
    """Processes of one job listed on GPUs not their own: a pid on several GPUs (two or more
    such pids), or, where no pid is shown (gpustat), one owner listed twice or more on several GPUs."""
    if isinstance(processes, Unavailable):
        return []
    extras: list[ProcessUse] = []  # the entries on a GPU that is not the process's own (its largest)
    spread: dict[tuple[object, ...], list[ProcessUse]] = {}
    for p in processes:
        if p.pid:
            spread.setdefault(("pid", p.pid), []).append(p)
        else:  # gpustat: one key per owner and GPU
            spread.setdefault(("owner", p.name, p.gpu), []).append(p)
    groups = list(spread.items())
    by_pid = [entries for key, entries in groups if key[0] == "pid" and len({e.gpu for e in entries}) > 1]
    by_owner = [entries for key, entries in groups if key[0] == "owner" and len(entries) > 1]
    if len(by_pid) >= 2:
        for entries in by_pid:
            own = max(entries, key=lambda e: _num(e.memory_mib) or 0)
            extras += [e for e in entries if e is not own]
    elif len({entries[0].gpu for entries in by_owner}) >= 2:
        for entries in by_owner:
            own = max(entries, key=lambda e: _num(e.memory_mib) or 0)
            extras += [e for e in entries if e is not own]
    if not extras:
        return []
    held = max(_num(e.memory_mib) or 0 for e in extras)
    memory = held >= EMPTY_MIB
    gpus = sorted({p.gpu for p in processes})
    evidence = {f"GPU {i}": [f"{p.name}{f' (pid {p.pid})' if p.pid else ''}: {p.memory_mib} MiB" for p in processes if p.gpu == i] for i in gpus}
    shared = {e.gpu for e in extras}
    if len(shared) == 1 and len(gpus) > 2 and all(e.pid for e in extras):
        # every extra entry on one GPU, the processes' own spread over the others: each rank touched that GPU first
        gpu = shared.pop()
        return [GPU_PROCESS_ON_EVERY_GPU(
            case="one-gpu", evidence=evidence, gpu=gpu, count=len(extras), pids=", ".join(str(e.pid) for e in extras[:8]) + (", ..." if len(extras) > 8 else ""),
            extra=f"up to {held:.0f} MiB each",
        )]
    return [GPU_PROCESS_ON_EVERY_GPU(
        case="memory" if memory else "empty", evidence=evidence,
        gpus=", ".join(f"GPU {i}" for i in gpus), extra=f"{len(extras)} entries, up to {held:.0f} MiB" if memory else f"{len(extras)} entries with {held:.0f} MiB{' or less' if held else ''}",
    )]


def activity_findings(gpus: Sequence[GpuActivity], processes: Sequence[ProcessUse] | Unavailable = NOT_SHOWN,
                      hang_said: bool = False, unused_said: str = "") -> list[Finding]:
    return (collective_spin(gpus, hang_said) + rank_idle(gpus, processes, hang_said) + unused(gpus) + not_used(gpus, unused_said)
            + job_idle(gpus, unused_said) + memory_uneven(gpus)
            + memory_without_process(gpus, processes) + process_on_every_gpu(processes))
