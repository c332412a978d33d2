"""What an Xid means for a training job: the NVIDIA driver's GPU fault codes, read
from kernel-log lines (`NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen
off the bus.`), by `check` (the kernel log of this boot) and by `diagnose` (a
pasted log). One table, one line reader, one finding.

The meanings and actions are NVIDIA's, from the Xid catalog
(https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html: the
description and the "Resolution Bucket" of each code) and the GPU memory error
management guide (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/);
only the Xids that stop or slow a training job are listed, an unknown code is
reported by number with the catalog's link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpudoctor.catalog.findings.gpu_health import GPU_XID_ERRORS
from gpudoctor.core.findings import Finding, Severity

CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"

# What the catalog's resolution buckets ask for, in the words of a training job.
APP = "application"  # RESTART_APP: the process that faulted; usually a bug in it or a kernel it ran
RESET = "reset"  # RESET_GPU: the GPU needs a reset (no process on it) or a reboot
DRAIN = "drain"  # RESTART_BM / CONTACT_SUPPORT: take the node out, have the GPU reseated or replaced
AFTERMATH = "aftermath"  # logged while cleaning up after another error: not a cause
WATCH = "watch"  # the hardware coped; worth knowing if it repeats

ACTIONS = {
    APP: "the job that ran on this GPU faulted: usually an out-of-range index or a bad kernel in the code or a "
    "library; rerun with CUDA_LAUNCH_BLOCKING=1 to see where; the GPU itself is fine unless it repeats with "
    "different programs",
    RESET: "stop the jobs on this GPU and reset it when idle (sudo nvidia-smi -r -i <gpu>, or ask the admin), "
    "or reboot the node; if it comes back, drain the node and report the GPU",
    DRAIN: "drain the node (take it out of the job's node list) and ask the admin to reseat or replace the GPU "
    "and check its power and cooling; a reboot only brings it back until the next fault",
    AFTERMATH: "nothing of its own: look at the Xid logged just before it",
    WATCH: "nothing now; if it repeats, have the GPU checked",
}
# What it does to a training job: the finding's why, after the Xid's meaning.
CONSEQUENCES = {
    APP: "the program on that GPU faulted, so its rank died with a CUDA error and the other ranks wait for it until "
    "their timeout; the GPU itself is usually fine",
    RESET: "the GPU is left in a state only a reset clears; the rank on it crashes or hangs, every other rank times out, "
    "and new jobs on it fail until it is reset",
    DRAIN: "a hardware fault; the rank on that GPU crashes or hangs, every other rank times out, and the GPU fails "
    "again until it is reseated or replaced",
    AFTERMATH: "logged while the driver cleaned up after an earlier error, not a cause of its own",
    WATCH: "the hardware coped and jobs keep running; repeats point at a failing GPU",
}
# Which Xid leads the finding, among those of the worst severity: the one that asks the most.
LEADS = (DRAIN, RESET, APP, WATCH, AFTERMATH)
SEVERITY = {APP: Severity.WARN, RESET: Severity.ERROR, DRAIN: Severity.ERROR, AFTERMATH: Severity.INFO, WATCH: Severity.INFO}


@dataclass(frozen=True)
class XidKind:
    meaning: str  # the catalog's description
    action: str  # one of ACTIONS' keys


XIDS: dict[int, XidKind] = {
    8: XidKind("GPU stopped processing (a channel timed out)", APP),
    13: XidKind("Graphics Engine Exception (often an out-of-range access in a kernel)", APP),
    31: XidKind("GPU memory page fault (a kernel touched an address it does not own)", APP),
    32: XidKind("Invalid or corrupted push buffer stream", APP),
    38: XidKind("Driver firmware error", RESET),
    43: XidKind("GPU stopped processing (the faulting channel was stopped)", APP),
    45: XidKind("Preemptive cleanup, due to previous errors", AFTERMATH),
    48: XidKind("Double Bit ECC Error (an uncorrectable memory error)", RESET),
    61: XidKind("Internal micro-controller breakpoint/warning", RESET),
    62: XidKind("Internal micro-controller halt", RESET),
    63: XidKind("ECC page retirement or row remapping recording event (applies at the next GPU reset)", WATCH),
    64: XidKind("ECC page retirement or row remapping recording failure", RESET),
    68: XidKind("Video processor (NVDEC) exception", APP),
    69: XidKind("Graphics Engine class error", APP),
    74: XidKind("NVLink Error", RESET),
    79: XidKind("GPU has fallen off the bus", DRAIN),
    92: XidKind("High single-bit ECC error rate", WATCH),
    94: XidKind("Contained ECC error (the process on the affected memory was stopped)", APP),
    95: XidKind("Uncontained ECC error", RESET),
    109: XidKind("Context Switch Timeout Error", APP),
    119: XidKind("GSP RPC timeout (the GPU's firmware did not answer the driver)", RESET),
    120: XidKind("GSP error (the GPU's firmware failed)", RESET),
    121: XidKind("C2C link corrected error", WATCH),
    122: XidKind("SPI PMU RPC read failure", RESET),
    123: XidKind("SPI PMU RPC write failure", RESET),
    140: XidKind("Unrecovered ECC error", RESET),
    143: XidKind("GPU initialization failure", DRAIN),
    144: XidKind("NVLink: SAW MVB error", RESET),
    145: XidKind("NVLink: RLW error", RESET),
    146: XidKind("NVLink: TLW error", RESET),
    147: XidKind("NVLink: TREX error", RESET),
    148: XidKind("NVLink: NVLPW control error", RESET),
    149: XidKind("NVLink: NETIR error", RESET),
    150: XidKind("NVLink: MSE error", RESET),
    154: XidKind("GPU recovery action changed (the driver says what the GPU needs: reset, reboot or drain)", RESET),
    155: XidKind("NVLink link down", RESET),
}

XID_LINE = re.compile(
    r"NVRM: Xid \((?P<pci>PCI:[0-9A-Fa-f:.]+)[^)]*\): (?P<xid>\d+)"
    r"(?:, pid=(?P<pid>'?[^,]*'?))?(?:, name=(?P<name>[^,]*))?(?:,\s*(?P<detail>.*))?"
)
# Newer drivers say it over three lines without a number: "NVRM: The NVIDIA GPU 0000:b3:00.0 / ... / fallen off the bus"
FALLEN_OFF = re.compile(r"(?:NVIDIA GPU (?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f:.]+).*)?fallen off the bus")
NEEDLES = ("NVRM: Xid", "fallen off the bus")


@dataclass(frozen=True)
class XidEvent:
    """One Xid line of a kernel log."""

    xid: int
    pci: str  # "PCI:0000:3b:00" as the driver writes it; "" when the line does not say
    pid: str  # "" when not given ("'<unknown>'" is kept as written)
    process: str
    detail: str  # the rest of the line, cut
    line: str  # the whole line, cut


def read_xid(text: str) -> XidEvent | None:
    """The Xid of one kernel-log line, or None."""
    if not any(n in text for n in NEEDLES):
        return None
    m = XID_LINE.search(text)
    if m is not None:
        return XidEvent(
            xid=int(m["xid"]),
            pci=m["pci"],
            pid=(m["pid"] or "").strip(),
            process=(m["name"] or "").strip(),
            detail=(m["detail"] or "").strip()[:200],
            line=text.strip()[:300],
        )
    m = FALLEN_OFF.search(text)
    if m is not None:
        pci = f"PCI:{m['pci']}" if m["pci"] else ""
        return XidEvent(79, pci, "", "", "GPU has fallen off the bus", text.strip()[:300])
    return None


# "NVRM: The NVIDIA GPU 0000:b3:00.0" opens the three-line form: the next lines end in "fallen off the bus"
GPU_NAMED = re.compile(r"NVIDIA GPU (?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f:.]+)")


def xid_events(lines: Iterable[str], limit: int = 200) -> tuple[XidEvent, ...]:
    """The Xids of a kernel log, in order (the first `limit`: a GPU in a fault loop logs thousands)."""
    events: list[XidEvent] = []
    named, named_at = "", -10
    for i, line in enumerate(lines):
        if "NVIDIA GPU" in line:
            m = GPU_NAMED.search(line)
            if m:
                named, named_at = m["pci"], i
        if not any(n in line for n in NEEDLES):
            continue
        event = read_xid(line)
        if event is None:
            continue
        if not event.pci and named and i - named_at <= 2:  # the GPU the lines just above named
            event = XidEvent(event.xid, f"PCI:{named}", event.pid, event.process, event.detail, event.line)
        events.append(event)
        if len(events) >= limit:
            break
    return tuple(events)


def kind_of(xid: int) -> XidKind:
    return XIDS.get(xid) or XidKind(f"not in gpudoctor's table: look it up in NVIDIA's Xid catalog ({CATALOG})", WATCH)


def line_fields(xid: int, pci: str = "") -> dict:
    """Evidence for one Xid: its number, the GPU, what it means and what to do."""
    kind = kind_of(xid)
    out = {"xid": xid, "meaning": kind.meaning, "action": ACTIONS[kind.action]}
    if pci:
        out["pci"] = pci
    return out


def xid_findings(events: Sequence[XidEvent], source: str) -> list[Finding]:
    """One finding for the Xids of a log, worst first; [] when there are none. Its title,
    why and fix are the worst Xid's meaning, consequence and action; the others follow."""
    if not events:
        return []
    counts: dict[tuple[int, str], int] = {}
    first: dict[tuple[int, str], XidEvent] = {}
    for e in events:
        key = (e.xid, e.pci)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, e)
    order = sorted(counts, key=lambda k: (-SEVERITY[kind_of(k[0]).action].rank, k))
    evidence: dict = {"source": source}
    for xid, pci in order:
        kind = kind_of(xid)
        where = f" on {pci}" if pci else ""
        evidence[f"Xid {xid}{where}"] = (
            f"{kind.meaning}; {counts[(xid, pci)]} time(s); first: {first[(xid, pci)].line}"
        )
    xid, pci = min(order, key=lambda k: (-SEVERITY[kind_of(k[0]).action].rank, LEADS.index(kind_of(k[0]).action)))
    rest = [k for k in order if k != (xid, pci)]
    lead = kind_of(xid)
    others = ", ".join(dict.fromkeys(
        f"Xid {x} ({kind_of(x).meaning.split(' (')[0]})" + (f" on {p}" if p else "") for x, p in rest
    ))
    # The other Xids' actions, each once, but none for aftermath and corrected events.
    actions: dict[str, list[str]] = {}
    for x, _ in rest:
        action = kind_of(x).action
        if action != lead.action and action not in (AFTERMATH, WATCH):
            actions.setdefault(action, []).append(str(x))
    other_actions = "; ".join(f"Xid {', '.join(dict.fromkeys(xs))}: {ACTIONS[a]}" for a, xs in actions.items())
    return [GPU_XID_ERRORS(
        case="several" if rest else "one", fix_case="several" if actions else "one",
        evidence=evidence, severity=SEVERITY[lead.action],
        gpu=f"GPU {pci}" if pci else "A GPU", xid=xid, meaning=lead.meaning, consequence=CONSEQUENCES[lead.action],
        action=ACTIONS[lead.action], others=others, other_actions=other_actions,
    )]


def pattern_fields(m: re.Match, _context: list[str]) -> dict:
    """Evidence for the `nvidia-xid` log pattern: the Xid, its meaning and action."""
    xid = m.groupdict().get("xid") or m.groupdict().get("agent_xid")  # the kernel's line, or an agent's event quoting it
    return line_fields(int(xid) if xid else 79, m.groupdict().get("pci") or "")
