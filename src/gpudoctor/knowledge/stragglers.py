"""The straggler doctor's verdict: from each rank's step accounting
(hooks/step_clock.py), which rank (or node) the others wait for, in which
phase it loses the time, and what the job would gain if it kept up.

Pure: no torch, no I/O. Clocks of different nodes are never compared. What
lines the ranks up is the step number (every rank counts the same optimizer
steps) and what each rank measured on its own clock: how long it waited inside
collectives in that step. At a collective the last rank to arrive waits least;
every other rank waits for it. So a rank's lateness at a step is the longest
wait of any rank in that step minus its own (its arrival after the first rank's),
and the straggler is the rank whose lateness stays above the noise floor.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass

from gpudoctor.catalog.findings.stragglers import COLLECTIVE_WAIT, RANK_PAUSE, RANK_STRAGGLER
from gpudoctor.core.findings import Finding

# The phases of a step, in the order every record holds them. "collective" is time
# spent waiting inside collectives (explicit calls, DDP's gradient all-reduce after
# the backward's own work, DDP's buffer broadcast); "other" is the rest of the step.
PHASES = ("data", "forward", "backward", "optimizer", "other", "collective")
WORK_PHASES = PHASES[:5]
COLLECTIVE = PHASES.index("collective")
PHASE_WORDS = {
    "data": "loading data",
    "forward": "in the forward pass",
    "backward": "in the backward pass",
    "optimizer": "in the optimizer step",
    "other": "in its own Python between the phases",
}

# A record: (step number, start µs on the rank's own clock, step µs, then µs per phase).
INDEX, START, TOTAL, FIRST_PHASE = 0, 1, 2, 3

# Steps the verdict skips at the start (DDP's first iteration, lazy initialisation).
WARMUP_STEPS = 2
MIN_STEPS = 4  # fewer steps seen by every rank: no verdict
# The noise floor (docs/commands/run.md, "Stragglers"): balanced jobs on a busy
# 2-core machine showed mean lateness below 3 ms and 12 % of the step, and no rank
# last at more than ~60 % of the steps.
LATE_FLOOR_MS = 5.0
LATE_FLOOR_SHARE = 0.15  # of the step time
LAST_SHARE_FLOOR = 0.7  # the straggler is the last to arrive at this share of the steps, at least,
DOMINANCE = 3.0  # ... or late by this many times the next latest rank (a rank late now and then: a save every N steps)
# Waiting with nobody late: the collectives themselves are slow.
# Even the last rank to arrive (the one that waits least) must wait this long: the
# transfer itself. Balanced 3-rank jobs on a 2-core machine at load 19 waited up to 49 %
# of an 18 ms step (docs/commands/run.md, "Noise floor").
# A rank late above the floor at this many of the compared steps, or fewer, paused (an
# evaluation, a checkpoint once): not a straggler (rank-pause, info).
ISOLATED_EVENTS = 1
WAIT_FLOOR_MS = 10.0
WAIT_FLOOR_SHARE = 0.5


@dataclass(frozen=True)
class RankSteps:
    """What one rank publishes about its steps (small: at most RECENT records)."""

    rank: int
    node: str
    steps: int  # steps counted so far
    delimiter: str  # what ends a step: "optimizer", "backward" or "collective"
    recent: tuple[tuple[int, ...], ...] = ()  # the newest records, oldest first
    final: bool = False  # published as the rank ended


@dataclass(frozen=True)
class RankRow:
    """One rank's line of the per-rank table: means per step, in milliseconds."""

    rank: int
    node: str
    steps: int
    step_ms: float
    phases_ms: tuple[float, ...]  # in PHASES order
    late_ms: float  # mean arrival after the first rank, at the steps' collectives
    last_share: float  # share of the steps at which it arrived last


@dataclass(frozen=True)
class StepVerdict:
    rows: tuple[RankRow, ...]
    steps_per_s: float
    matched_steps: int  # steps every rank recorded, that the means are over
    findings: tuple[Finding, ...] = ()

    def slowest(self) -> tuple[int, str] | None:
        """(rank, phase) of the latest rank, for the live line; None without a verdict."""
        if not self.rows:
            return None
        row = max(self.rows, key=lambda r: r.late_ms)
        return row.rank, _worst_phase(row, self.rows)[0]


def _ms(us: float) -> float:
    return us / 1000.0


def _matched(ranks: list[RankSteps]) -> dict[int, dict[int, tuple[int, ...]]]:
    """step number -> rank -> record, for the steps every rank recorded (after warm-up)."""
    by_rank = {r.rank: {rec[INDEX]: rec for rec in r.recent if rec[INDEX] >= WARMUP_STEPS} for r in ranks}
    common = set.intersection(*(set(d) for d in by_rank.values())) if by_rank else set()
    return {i: {rank: by_rank[rank][i] for rank in by_rank} for i in sorted(common)}


def analyze_steps(ranks: list[RankSteps], live: bool = False) -> StepVerdict:
    """The per-rank table and, when one rank or node holds the others back (or every
    rank waits on slow collectives), the finding. `live`: while the job runs, the
    ranks' newest summaries, published at different moments, may share no step (a
    fast loop): then each rank's own newest steps, for the live line, and no finding."""
    ranks = sorted((r for r in ranks if r.recent), key=lambda r: r.rank)
    matched = _matched(ranks)
    if live and len(matched) < MIN_STEPS and ranks:
        return _unmatched(ranks)
    if len(ranks) < 1 or len(matched) < (MIN_STEPS if len(ranks) > 1 else 1):
        return StepVerdict((), 0.0, len(matched))
    n = len(matched)
    late = {r.rank: 0.0 for r in ranks}
    last = {r.rank: 0 for r in ranks}
    # Per step: each rank's lateness and the step's wall time (its longest rank), µs: what
    # bounds a speed-up claim (the share of the measured time the others spent waiting).
    per_step: dict[int, list[float]] = {r.rank: [] for r in ranks}
    walls: list[float] = []
    for records in matched.values():
        waits = {rank: rec[FIRST_PHASE + COLLECTIVE] for rank, rec in records.items()}
        longest = max(waits.values())
        walls.append(max(rec[TOTAL] for rec in records.values()))
        for rank, wait in waits.items():
            late[rank] += longest - wait
            per_step[rank].append(longest - wait)
        if len(waits) > 1:
            last[min(waits, key=lambda k: waits[k])] += 1
    rows = []
    for r in ranks:
        recs = [matched[i][r.rank] for i in matched]
        phases = tuple(_ms(sum(rec[FIRST_PHASE + p] for rec in recs) / n) for p in range(len(PHASES)))
        step = _ms(sum(rec[TOTAL] for rec in recs) / n)
        rows.append(RankRow(r.rank, r.node, r.steps, step, phases, _ms(late[r.rank] / n), last[r.rank] / n))
    step_ms = statistics.median(row.step_ms for row in rows)
    verdict = StepVerdict(tuple(rows), 1000.0 / step_ms if step_ms > 0 else 0.0, n)
    if len(rows) < 2:
        return verdict
    finding = _straggler(rows, step_ms, n, ranks[0].delimiter, per_step, walls) or _slow_collectives(rows, step_ms, n)
    return StepVerdict(verdict.rows, verdict.steps_per_s, n, (finding,) if finding else ())


def _unmatched(ranks: list[RankSteps]) -> StepVerdict:
    rows = []
    for r in ranks:
        recs = r.recent
        n = len(recs)
        phases = tuple(_ms(sum(rec[FIRST_PHASE + p] for rec in recs) / n) for p in range(len(PHASES)))
        rows.append(RankRow(r.rank, r.node, r.steps, _ms(sum(rec[TOTAL] for rec in recs) / n), phases, 0.0, 0.0))
    longest = max(row.phases_ms[COLLECTIVE] for row in rows)
    rows = [dataclasses.replace(row, late_ms=longest - row.phases_ms[COLLECTIVE]) for row in rows]
    step_ms = statistics.median(row.step_ms for row in rows)
    return StepVerdict(tuple(rows), 1000.0 / step_ms if step_ms > 0 else 0.0, 0)


def _worst_phase(row: RankRow, rows: tuple[RankRow, ...] | list[RankRow]) -> tuple[str, float]:
    """The work phase in which `row` spends the most more than the median of the other ranks."""
    others = [r for r in rows if r.rank != row.rank] or [row]
    excess = {
        phase: row.phases_ms[i] - statistics.median(o.phases_ms[i] for o in others)
        for i, phase in enumerate(WORK_PHASES)
    }
    phase = max(excess, key=lambda p: excess[p])
    return phase, excess[phase]


def late_floor_ms(step_ms: float) -> float:
    """Mean lateness below this is noise (see LATE_FLOOR_MS)."""
    return max(LATE_FLOOR_MS, LATE_FLOOR_SHARE * step_ms)


def waiting_share(lates_us: list[float], walls_us: list[float]) -> float:
    """The share of the measured wall time (the compared steps, each as long as its
    longest rank) the other ranks spent waiting for one rank: what bounds any speed-up."""
    wall = sum(walls_us)
    waited = sum(min(late, w) for late, w in zip(lates_us, walls_us))
    return waited / wall if wall > 0 else 0.0


def _straggler(
    rows: list[RankRow], step_ms: float, steps: int, delimiter: str,
    per_step: dict[int, list[float]] | None = None, walls: list[float] | None = None,
) -> Finding | None:
    worst = max(rows, key=lambda r: r.late_ms)
    floor = late_floor_ms(step_ms)
    second = max((r.late_ms for r in rows if r.rank != worst.rank), default=0.0)
    dominant = worst.late_ms >= DOMINANCE * second
    if worst.late_ms < floor or (worst.last_share < LAST_SHARE_FLOOR and not dominant):
        return None
    lates = (per_step or {}).get(worst.rank) or [worst.late_ms * 1000.0] * steps
    walls = walls or [step_ms * 1000.0] * steps
    events = [late for late in lates if _ms(late) >= floor]
    if len(events) <= ISOLATED_EVENTS:
        return _pause(worst, lates, walls, steps, floor)
    phase, excess = _worst_phase(worst, rows)
    share = waiting_share(lates, walls)
    # Bounded by the measured time: had the others not waited at all, the same steps
    # would take (1 - share) of it.
    faster = 1.0 / max(1.0 - share, 1e-3)
    nodes = sorted({r.node for r in rows})
    late_node = _late_node(rows, worst, floor) if len(nodes) > 1 else None
    others = [r for r in rows if r.rank != worst.rank]
    median_phases = {p: round(statistics.median(r.phases_ms[i] for r in others), 1) for i, p in enumerate(PHASES)}
    evidence = {
        "rank": worst.rank,
        "node": worst.node,
        "phase": phase,
        "late ms per step": round(worst.late_ms, 1),
        "last to arrive at": round(worst.last_share, 3),
        "excess ms per step": round(excess, 1),
        "step ms": round(step_ms, 1),
        "speedup if it kept up": round(faster, 2),
        "others' waiting share of the measured time": round(share, 3),
        "steps it was late at": len(events),
        "its phases ms": {p: round(worst.phases_ms[i], 1) for i, p in enumerate(PHASES)},
        "other ranks' median phases ms": median_phases,
        "steps compared": steps,
        "step ends at": delimiter,
    }
    if late_node:
        evidence["late node"] = late_node
    case = "node" if late_node else "rank-of-nodes" if len(nodes) > 1 else "rank"
    fix_case = phase if phase in ("data", "optimizer") else "model-pass" if phase in ("forward", "backward") else "other"
    return RANK_STRAGGLER(
        case=case, fix_case=fix_case, evidence=evidence, rank=worst.rank, node=late_node or worst.node,
        ranks=", ".join(str(r.rank) for r in rows if r.node == late_node), late_ms=worst.late_ms,
        last_share=worst.last_share, excess_ms=excess, phase_words=PHASE_WORDS[phase], share=share, faster=faster,
        phase=phase, where=f"node {late_node}" if late_node else f"rank {worst.rank}'s node ({worst.node})",
    )  # fmt: skip


def _pause(worst: RankRow, lates: list[float], walls: list[float], steps: int, floor: float) -> Finding:
    """One rank made the others wait once (an evaluation, a checkpoint): not a
    straggler. What was seen, at info, and what would make it one."""
    biggest = max(lates)
    at = lates.index(biggest)
    share = waiting_share(lates, walls)
    evidence = {
        "rank": worst.rank,
        "pause ms": round(_ms(biggest), 1),
        "step index in the compared window": at,
        "steps compared": steps,
        "steps it was late at": sum(1 for late in lates if _ms(late) >= floor),
        "late floor ms": round(floor, 1),
        "others' waiting share of the measured time": round(share, 3),
    }
    return RANK_PAUSE(evidence=evidence, rank=worst.rank, pause_ms=_ms(biggest), steps=steps, isolated=ISOLATED_EVENTS)


def _late_node(rows: list[RankRow], worst: RankRow, floor: float) -> str | None:
    """The straggler's node, when all its ranks are late and no rank elsewhere is."""
    mine = [r for r in rows if r.node == worst.node]
    rest = [r for r in rows if r.node != worst.node]
    if len(mine) > 1 and all(r.late_ms >= floor for r in mine) and all(r.late_ms < floor for r in rest):
        return worst.node
    return None


def _slow_collectives(rows: list[RankRow], step_ms: float, steps: int) -> Finding | None:
    """Every rank waits long inside collectives and no rank is late: the link is the limit."""
    if min(r.phases_ms[COLLECTIVE] for r in rows) < max(WAIT_FLOOR_MS, WAIT_FLOOR_SHARE * step_ms):
        return None
    wait = statistics.median(r.phases_ms[COLLECTIVE] for r in rows)
    share = wait / step_ms if step_ms > 0 else 0.0
    evidence = {
        "wait ms per step": round(wait, 1),
        "step ms": round(step_ms, 1),
        "share of the step": round(share, 3),
        "latest rank": max(rows, key=lambda r: r.late_ms).rank,
        "late ms per step": round(max(r.late_ms for r in rows), 1),
        "steps compared": steps,
    }
    return COLLECTIVE_WAIT(evidence=evidence, wait_ms=wait, share=share)


def verdict_json(verdict: StepVerdict) -> dict:
    """The accounting as the JSON reports carry it (docs/json.md, "steps")."""
    slowest = verdict.slowest()
    late = {r.rank: r.late_ms for r in verdict.rows}
    return {
        "slowest": {"rank": slowest[0], "phase": slowest[1], "late_ms": round(late[slowest[0]], 2)} if slowest else None,
        "steps_per_s": round(verdict.steps_per_s, 2),
        "steps_compared": verdict.matched_steps,
        "phases": list(PHASES),
        "ranks": [
            {
                "rank": r.rank,
                "node": r.node,
                "steps": r.steps,
                "step_ms": round(r.step_ms, 2),
                "phases_ms": {p: round(r.phases_ms[i], 2) for i, p in enumerate(PHASES)},
                "late_ms": round(r.late_ms, 2),
                "last_share": round(r.last_share, 3),
            }
            for r in verdict.rows
        ],
    }
