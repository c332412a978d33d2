"""Pure checks of `gpudoctor allreduce`: /dev/shm before launch, correctness and
bandwidth after, the link verdict on GPUs, and what the NCCL narrowing reruns
say about which transport is broken. Facts in, findings out; no torch here."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from gpudoctor.commands.allreduce.bandwidth import Row, format_size
from gpudoctor.launch import rundir
from gpudoctor.commands.allreduce.expected import FULL_SIZE_BYTES, LOW_SHARE, STATISTIC, expectation
from gpudoctor.checks import wording
from gpudoctor.checks.system import SHM_MIN_BYTES
from gpudoctor.catalog.findings.allreduce import (
    ALLREDUCE_BANDWIDTH,
    ALLREDUCE_CORRECT,
    ALLREDUCE_LATENCY_NOISY,
    ALLREDUCE_SHM,
    ALLREDUCE_WRONG_RESULT,
)
from gpudoctor.catalog.findings.links import ALLREDUCE_LINK_SPEED
from gpudoctor.catalog.findings.nccl import NCCL_BROKEN_GLOO_WORKS, NCCL_NARROWING_INCONCLUSIVE, NCCL_P2P_BROKEN, NCCL_SHM_BROKEN
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.links import LinkFacts


# Rough floors for a 2+ GPU collective at a large size. NVLink gives ~25 GB/s per
# link and direction (generations 2-4); a quarter of that per link is far below
# anything a working NVLink reaches, and is what NCCL gets through host memory.
NVLINK_GBPS_PER_LINK = 25.0
NVLINK_FLOOR_FRACTION = 0.25
PCIE_FLOOR_GBPS = 2.5  # below PCIe Gen3 x8 through the host bridge
VERDICT_MIN_BYTES = 32 << 20  # smaller sizes are latency-bound: no verdict on the link
# Repeated iterations of one size whose 90th percentile is this many times the fastest
# are not one figure. Measured (2-core CPU machine shared with other jobs, load ~11,
# gloo, 2 ranks, 4K, 20 iterations): one run spread 2.4x (median 229 us), the next
# 33x (median 3866 us); the issue saw 290 to 3392 us between runs.
NOISY_SPREAD = 3.0
NOISY_MIN_ITERS = 5  # fewer iterations say nothing about their spread


def check_shm(shm_total_bytes: int | None, backend: str, nproc: int) -> list[Finding]:
    """NCCL's shared-memory transport between ranks on one host lives in /dev/shm."""
    if backend != "nccl" or nproc < 2:
        return []
    if shm_total_bytes is None:
        return []
    size = wording.size(shm_total_bytes)
    if shm_total_bytes < SHM_MIN_BYTES:
        evidence = {"/dev/shm total": size, "needed at least": wording.size(SHM_MIN_BYTES), "ranks": nproc}
        return [ALLREDUCE_SHM(case="small", evidence=evidence, size=size, nproc=nproc)]
    return [ALLREDUCE_SHM(case="enough", severity=Severity.OK, no_why=True, no_fix=True, size=size)]


def check_correctness(rows: list[Row], planned: int, world: int) -> list[Finding]:
    """One error per rank that got a wrong element, naming the sizes; else one tick."""
    if not rows:
        return []
    by_rank: dict[int, list[tuple[Row, int]]] = {}
    for row in rows:
        for rank, wrong in enumerate(row.wrong_by_rank):
            if wrong:
                by_rank.setdefault(rank, []).append((row, wrong))
    op, dtype = rows[0].op, rows[0].dtype
    if not by_rank:
        done = "every size" if len(rows) == planned else f"the {len(rows)} of {planned} sizes that ran"
        return [ALLREDUCE_CORRECT(evidence={"sizes": [format_size(r.bytes) for r in rows]}, op=op, world=world, done=done, dtype=dtype)]
    findings = []
    for rank, bad in sorted(by_rank.items()):
        first_row, first_wrong = bad[0]
        more = f" (and {len(bad) - 1} more size(s))" if len(bad) > 1 else ""
        evidence = {
            "rank": rank,
            "dtype": dtype,
            "wrong elements by size": {format_size(r.bytes): w for r, w in bad},
            "sizes checked": len(rows),
        }
        findings.append(
            ALLREDUCE_WRONG_RESULT(evidence=evidence, rank=rank, op=op, wrong=first_wrong, count=first_row.count,
                                   size=format_size(first_row.bytes), more=more)
        )
    return findings


def check_bandwidth(summary: dict, world: int) -> list[Finding]:
    """The summary as one passed line: peak busbw and small-message latency."""
    if not summary.get("sizes_run"):
        return []
    # summarize() writes these keys together, whenever a size ran
    peak, at = summary.get("peak_busbw_gbps"), summary["peak_busbw_bytes"]
    lat, lat_at = summary.get("latency_us"), summary["latency_bytes"]
    evidence = {k: v for k, v in summary.items() if k.startswith(("peak", "lat"))}
    noisy = " (noisy: see allreduce-latency-noisy)" if latency_noisy(summary) else ""
    case = "ranks"
    if world == 1:
        case = "one-rank-in-place" if summary.get("placement") == "in-place" else "one-rank"
    if case == "one-rank-in-place":
        evidence.pop("peak_algbw_gbps", None)  # size / the cost of a call that moved nothing
    return [
        ALLREDUCE_BANDWIDTH(case=case, evidence=evidence, algbw=summary.get("peak_algbw_gbps", 0),
                            peak=peak, at=format_size(at), lat=lat, lat_at=format_size(lat_at), noisy=noisy)
    ]


def latency_noisy(summary: dict) -> bool:
    fastest, p90 = summary.get("latency_min_us"), summary.get("latency_p90_us")
    if summary.get("latency_iters", 0) < NOISY_MIN_ITERS or not fastest or not p90:
        return False
    if not (math.isfinite(fastest) and math.isfinite(p90)) or fastest <= 0:
        return False
    return p90 / fastest >= NOISY_SPREAD


def check_latency_noise(summary: dict, load: tuple[float, float, float] | None, cores: int | None) -> list[Finding]:
    """Small-message latency whose repeated iterations spread widely is not a fact
    about the link: say so, and how busy the machine's cores were (`load`: the
    1/5/15-minute load averages, `cores`: CPUs this process may use)."""
    if not latency_noisy(summary):
        return []
    fastest, p90, lat = summary["latency_min_us"], summary["latency_p90_us"], summary["latency_us"]
    busy = load[0] if load is not None and cores is not None and load[0] >= cores else None
    evidence = {
        "size": format_size(summary["latency_bytes"]),
        "median_us": lat,
        "fastest_us": fastest,
        "p90_us": p90,
        "spread": round(p90 / fastest, 1),
        "iterations": summary["latency_iters"],
    }
    if load is not None:
        evidence["load_average_1m"] = round(load[0], 2)
    if cores is not None:
        evidence["cores"] = cores
    return [
        ALLREDUCE_LATENCY_NOISY(case="busy" if busy is not None else "stolen", evidence=evidence, size=format_size(summary["latency_bytes"]),
                                fastest=fastest, p90=p90, ratio=p90 / fastest, lat=lat, spread=NOISY_SPREAD, load=busy, cores=cores)
    ]


def check_link_speed(summary: dict, world: int, link: LinkFacts | None) -> list[Finding]:
    """On GPUs: does the peak busbw fit what the link between the GPUs should give,
    and what share is it of what a published run on the same GPUs reached?"""
    found = _link_verdict(summary, world, link)
    if link is None or len(found) != 1 or found[0].severity not in (Severity.OK, Severity.WARN):
        return found
    return [against_published(found[0], summary, link)]


def against_published(verdict: Finding, summary: dict, link: LinkFacts) -> Finding:
    """The link verdict with the published figure for these GPUs (allreduce/expected.py):
    the share in the title, and a warning, with the link facts that may explain it,
    when a full-size run reached less than half of it."""
    # like with like: the published figures are nccl-tests' loop mean, not this table's median
    exp = expectation(link.gpus, link.kind, summary.get("peak_busbw_mean_gbps"))
    if exp is None:
        shape = f"{len(link.gpus)}x {', '.join(sorted(set(link.gpus))) or '?'} over {link.kind}"
        return dataclasses.replace(verdict, evidence={**verdict.evidence, "published busbw": f"no published figure for this shape ({shape})"})
    ref = exp.reference
    ev = {**verdict.evidence, "published busbw GB/s": ref.busbw_gbps, "share of published": round(exp.share, 2),
          "busbw compared (GB/s)": exp.measured_gbps, "statistic": STATISTIC,
          "published run": f"{ref.gpus}x {ref.model} over {ref.link}: {ref.note}", "conditions": ref.conditions,
          "source": ref.source}
    if link.pcie:
        ev["PCIe links"] = list(link.pcie)
    largest = summary.get("largest_bytes") or 0
    if exp.share >= LOW_SHARE or largest < FULL_SIZE_BYTES or verdict.severity is Severity.WARN:
        title = f"{verdict.title}; {exp.sentence()}"
        if exp.share < LOW_SHARE and largest < FULL_SIZE_BYTES:
            title += f" (largest size {format_size(largest)}: sweep to 1G for the peak)"
        return dataclasses.replace(verdict, title=title, evidence=ev)
    facts = [f"{link.nvlinks_min} NVLinks between the closest-linked pair" if link.kind == "nvlink" else "no NVLink",
             f"P2P {', '.join(link.p2p) or '?'}", f"topology {', '.join(link.topology) or '?'}"]
    facts += [f"{k}={v}" for k, v in link.env.items()]
    facts += [f"a PCIe link at {p}" for p in link.pcie if "(of" in p]  # trained narrower than it can
    return ALLREDUCE_LINK_SPEED(case="below-published", severity=Severity.WARN, evidence=ev, measured=exp.measured_gbps,
                                published=exp.sentence(), facts="; ".join(facts))


def _link_verdict(summary: dict, world: int, link: LinkFacts | None) -> list[Finding]:
    if link is None or world < 2:
        return []
    peak = summary.get("peak_busbw_gbps")
    largest = summary.get("largest_bytes") or 0
    ev = {
        "peak busbw GB/s": peak,
        "link": link.kind,
        "NVLinks between GPUs": link.nvlinks_min,
        "topology": list(link.topology),
        "P2P": list(link.p2p),
        "GPUs": list(link.gpus),
    }
    ev.update({k: v for k, v in link.env.items()})
    if link.hosts > 1:
        return [ALLREDUCE_LINK_SPEED(case="hosts", severity=Severity.INFO, evidence=ev, hosts=link.hosts, peak=peak)]
    if link.kind in ("unknown", "mixed") or peak is None or not math.isfinite(peak):
        reason = f": {link.reason}" if link.reason else ""
        return [ALLREDUCE_LINK_SPEED(case="no-verdict", severity=Severity.INFO, evidence=ev, reason=reason)]
    if largest < VERDICT_MIN_BYTES:
        return [ALLREDUCE_LINK_SPEED(case="latency-bound", severity=Severity.INFO, evidence=ev, largest=format_size(largest))]
    p2p_off = link.env.get("NCCL_P2P_DISABLE") in ("1", "true", "True")
    blocked = [s for s in link.p2p if s != "ok"]
    hint = (
        "NCCL_P2P_DISABLE is set"
        if p2p_off
        else f"NVML says P2P is {blocked[0]}"
        if blocked
        else "P2P is off or blocked?"
    )
    if link.kind == "nvlink":
        floor = NVLINK_FLOOR_FRACTION * NVLINK_GBPS_PER_LINK * (link.nvlinks_min or 1)
        if peak < floor:
            return [
                ALLREDUCE_LINK_SPEED(case="nvlink-slow", severity=Severity.WARN, evidence={**ev, "expected at least GB/s": round(floor, 1)},
                                     peak=peak, nvlinks=link.nvlinks_min, hint=hint)
            ]
        return [ALLREDUCE_LINK_SPEED(case="nvlink-ok", evidence=ev, peak=peak, nvlinks=link.nvlinks_min, floor=floor)]
    topology = ", ".join(link.topology) or "PCIe"
    if peak < PCIE_FLOOR_GBPS:
        return [
            ALLREDUCE_LINK_SPEED(case="pcie-slow", severity=Severity.WARN, evidence={**ev, "expected at least GB/s": PCIE_FLOOR_GBPS},
                                 peak=peak, topology=topology, hint=hint)
        ]
    return [ALLREDUCE_LINK_SPEED(case="pcie-ok", evidence=ev, peak=peak, topology=topology)]


# ---- NCCL narrowing: rerun the failing size with one transport switched off at a time.


@dataclass(frozen=True)
class Attempt:
    name: str
    backend: str
    env: dict
    label: str  # for the user: what changed

    def describe(self) -> str:
        return self.label


NARROWING = (
    Attempt("p2p-disabled", "nccl", {"NCCL_P2P_DISABLE": "1"}, "NCCL_P2P_DISABLE=1"),
    Attempt("shm-disabled", "nccl", {"NCCL_SHM_DISABLE": "1"}, "NCCL_SHM_DISABLE=1"),
    Attempt("gloo", "gloo", {}, "gloo on CPU"),
)


def should_narrow(backend: str, run_failed: bool, interrupted: bool) -> bool:
    """Only an NCCL run whose ranks hung or died is narrowed (never gloo: the
    variables switch NCCL transports, and gloo is the last resort itself)."""
    return backend == "nccl" and run_failed and not interrupted


def failing_size_index(steps: list[int], sizes: int) -> int:
    """Which size the run failed at: the furthest any rank got (its peers, or it,
    were stuck in that size's collective). Step k is size k-1; 0 is before the first."""
    furthest = max(steps, default=0)
    return min(max(furthest - 1, 0), max(sizes - 1, 0))


def next_attempt(done: list[tuple[Attempt, bool]]) -> Attempt | None:
    """The next rerun, or None: stop at the first that works, or when all were tried."""
    if any(worked for _, worked in done):
        return None
    tried = {a.name for a, _ in done}
    return next((a for a in NARROWING if a.name not in tried), None)


def narrowing_verdict(done: list[tuple[Attempt, bool]], size_bytes: int, log: str | None) -> Finding:
    """What the reruns say. `done`: each attempt and whether it worked."""
    worked = next((a for a, w in done if w), None)
    size = format_size(size_bytes)
    ev = {
        "failing size": size,
        "reruns": {a.label: ("works" if w else "fails") for a, w in done},
        "NCCL_DEBUG=INFO log": log or "not kept",
    }
    log_hint = f"less {log}" if log else "NCCL_DEBUG=INFO gpudoctor allreduce"
    if worked is not None and worked.name == "p2p-disabled":
        return NCCL_P2P_BROKEN(evidence=ev, size=size)
    if worked is not None and worked.name == "shm-disabled":
        return NCCL_SHM_BROKEN(evidence=ev, size=size)
    if worked is not None and worked.name == "gloo":
        return NCCL_BROKEN_GLOO_WORKS(evidence=ev, size=size, log_hint=log_hint)
    return NCCL_NARROWING_INCONCLUSIVE(evidence=ev, size=size, fault_env=rundir.FAULT_ENV, log_hint=log_hint)
