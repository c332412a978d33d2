"""`gpudoctor allreduce --bisect`: when the job's bandwidth is low, which rank,
node or link is it? The ranks measure the same all-reduce in pairs, every pair of
a round at the same time (a round-robin schedule: n-1 rounds of n/2 disjoint
pairs, bounded by MAX_PAIRS_RANKS; above it, each rank with its ring neighbours
in 2 or 3 rounds), and every round twice. A pair slow in both passes is timed
twice more after a pause (the recheck) before it can be called slow. A slow rank
makes every pair it is in slow; a slow link only the pairs across it; a slow node
every pair of its ranks with the others.

Never confidently wrong on a busy host (issue 34): a pair is compared only with
pairs of its own kind (inside a node, across nodes), by what it took in both
passes, against a noise floor from the same run (how far the pairs' two passes
disagree), and the margin beyond it is stated in the finding. On two busy cores a
pair was once slow in both passes with nothing shaped (CI, a 3-node control): a
burst of the host's other work can span both passes of one pair, which are only
a few milliseconds apart; it rarely spans the recheck as well.
benchmarks/bisect_control.py measures false positives on unshaped, loaded runs.

The rank side (`measure_pairs`) runs inside `measure.run_rank` after the sweep;
the verdict (`bisect_findings`) is pure.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from gpudoctor.catalog.findings.stragglers import ALLREDUCE_BISECT, ALLREDUCE_SLOW_LINK, ALLREDUCE_SLOW_RANK
from gpudoctor.core.findings import Finding
from gpudoctor.probe.links import RankPlace

MAX_PAIRS_RANKS = 16  # all pairs up to here (120 pairs in 15 rounds); ring neighbours above
# The all-reduce each pair times: on GPUs big enough to be bandwidth-bound on a slow path;
# on CPU (gloo) small enough that the host's own noise does not drown a slow rank.
BISECT_BYTES = {"cuda": 16 << 20, "cpu": 64 << 10}
BISECT_ITERS = 5
PASSES = 2  # every pair is timed in two passes over the rounds: a slow pair must be slow in both
# A pair is slow when its time (the faster of its two passes) is above the baseline of its own
# kind of pair (inside a node, across nodes) by the run's noise floor and then this factor more
# (the margin: 3x = 200%), and by SLOW_MIN_US.
SLOW_FACTOR = 3.0
SLOW_MIN_US = 1000.0  # ... and by at least this much (a busy host jitters small times by more than 3x)
# A pair that could be slow after both passes (suspects()) is timed RECHECK_PASSES more times
# after RECHECK_PAUSE_S, its rounds in reverse order; its held time is the fastest of all.
RECHECK_PASSES = 2
RECHECK_PAUSE_S = 0.2
# A slow link costs about the same every time it is timed. A pair whose recheck is more than this
# many times faster than its passes was slowed by something else during the passes (CI, two busy
# cores: passes 22058 / 20778 us, recheck 3897 us, still over a 1,650 us limit because the loaded
# host slowed the recheck too): it is not called slow; the title says what the recheck showed.
RECHECK_AGREE = 2.0
RANK_SHARE = 0.75  # a rank in at least this share of slow pairs, of its own, is the slow one
INSIDE, ACROSS, UNPLACED = "inside a node", "across nodes", "pairs"


@dataclass(frozen=True)
class PairTime:
    """The median time of one all-reduce between ranks a and b (the slower side's),
    in the first pass and in the repeat (0: not repeated), and the faster of its
    recheck passes (0: not rechecked, it could not be slow)."""

    a: int
    b: int
    us: float
    repeat_us: float = 0.0
    recheck_us: float = 0.0

    @property
    def passes_us(self) -> float:
        """What the pair took in both passes: the faster of the two (a busy host's
        hiccup in one pass is not the link's). Every pair has it: the yardsticks
        (baseline, noise floor) are built from it alone, so a recheck can only clear
        a pair, never make another one slow."""
        return min(self.us, self.repeat_us) if self.repeat_us else self.us

    @property
    def unsteady(self) -> bool:
        """Rechecked, and far faster then than in both passes: not what a slow link does."""
        return bool(self.recheck_us) and self.passes_us > RECHECK_AGREE * self.recheck_us

    @property
    def held_us(self) -> float:
        """What the pair took every time it was timed: the faster of its passes and
        its recheck."""
        return min(self.passes_us, self.recheck_us) if self.recheck_us else self.passes_us

    def said(self) -> str:
        """"1-2: 2488 us, again 1952 us, rechecked 470 us"."""
        again = f"{self.a}-{self.b}: {self.us:.0f} us, again {self.repeat_us:.0f} us"
        return again + (f", rechecked {self.recheck_us:.0f} us" if self.recheck_us else "")

    @property
    def spread(self) -> float:
        """How far the two passes of this pair disagree, as a fraction of the faster."""
        low, high = sorted((self.us, self.repeat_us))
        return high / low - 1 if low > 0 else 0.0


def pair_rounds(world: int) -> list[list[tuple[int, int]]]:
    """Rounds of disjoint pairs: every pair once (circle method) up to
    MAX_PAIRS_RANKS ranks; above, each rank with its ring neighbours."""
    if world < 2:
        return []
    if world > MAX_PAIRS_RANKS:
        ring = [(i, (i + 1) % world) for i in range(world)]
        rounds = [[p for p in ring if p[0] % 2 == 0 and p[0] != world - 1], [p for p in ring if p[0] % 2 == 1]]
        if world % 2:
            rounds.append([ring[-1]])
        return [[(min(p), max(p)) for p in r] for r in rounds]
    players = list(range(world)) + ([-1] if world % 2 else [])
    n = len(players)
    rounds = []
    for _ in range(n - 1):
        pairs = [(players[i], players[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(min(p), max(p)) for p in pairs if -1 not in p])
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def measure_pairs(
    torch, dist, rank: int, world: int, device, dtype, slow_s: float = 0.0, slow_peers: frozenset[int] | None = None,
    transient: bool = False,
) -> list[PairTime]:
    """Every rank calls this (group creation is collective). Returns, on rank 0,
    every pair's time in both passes and the recheck's; elsewhere an empty list.
    `slow_s`: the `slow`, `slowlink` and `hiccup` faults' sleep before each call, with
    every peer or with the ranks in `slow_peers`; `transient` (hiccup): in the two
    passes only, not in the recheck (GPUDOCTOR_FAULT, docs/commands/allreduce.md)."""
    rounds = pair_rounds(world)
    groups = {pair: dist.new_group(list(pair)) for r in rounds for pair in r}  # the same order on every rank
    count = max(1, bisect_bytes(device.type) // torch.tensor([], dtype=dtype).element_size())
    buf = torch.ones(count, dtype=dtype, device=device)

    def timed(schedule: list[list[tuple[int, int]]], passes: int, sleep_s: float) -> list[list[float]]:
        """Every round of `schedule`, `passes` times over; every rank's times, on every rank."""
        mine = []
        for _ in range(passes):
            for pairs in schedule:
                pair = next((p for p in pairs if rank in p), None)
                took = 0.0
                if pair is not None:
                    peer = pair[0] if pair[1] == rank else pair[1]
                    sleep = sleep_s if slow_peers is None or peer in slow_peers else 0.0
                    took = group_time(torch, dist, groups[pair], buf, device, sleep)
                mine.append(took)
                dist.barrier()  # the next round's pairs start together
        everyone = [torch.zeros(len(mine), dtype=torch.float64, device=device) for _ in range(world)]
        dist.all_gather(everyone, torch.tensor(mine, dtype=torch.float64, device=device))
        return [t.tolist() for t in everyone]

    pairs = pass_times(rounds, timed(rounds, PASSES, slow_s), PASSES)
    # every rank holds the same gathered times, so every rank picks the same suspects
    again = suspects(pairs)
    if again:
        time.sleep(RECHECK_PAUSE_S)
        schedule = [kept for kept in ([p for p in r if p in again] for r in reversed(rounds)) if kept]
        rechecked = pass_times(schedule, timed(schedule, RECHECK_PASSES, 0.0 if transient else slow_s), RECHECK_PASSES)
        fastest = {(p.a, p.b): min(p.us, p.repeat_us) if p.repeat_us else p.us for p in rechecked}
        pairs = [PairTime(p.a, p.b, p.us, p.repeat_us, round(fastest[(p.a, p.b)], 1)) if (p.a, p.b) in fastest else p for p in pairs]
    return pairs if rank == 0 else []


def pass_times(rounds: list[list[tuple[int, int]]], times_by_rank: list[list[float]], passes: int) -> list[PairTime]:
    """Each pair's time (the slower side's) in the first pass and, with 2 passes or more,
    in the last, from every rank's times in round order, pass after pass."""
    out = []
    for index, pairs in enumerate(rounds):
        again = index + (passes - 1) * len(rounds)
        for a, b in pairs:
            first = max(times_by_rank[a][index], times_by_rank[b][index])
            repeat = max(times_by_rank[a][again], times_by_rank[b][again]) if passes > 1 else 0.0
            out.append(PairTime(a, b, round(first, 1), round(repeat, 1)))
    return out


def suspects(pairs: list[PairTime]) -> set[tuple[int, int]]:
    """The pairs bisect_findings could call slow, whatever their kind: above the fastest
    pair by SLOW_FACTOR and by SLOW_MIN_US (every kind's limit is at least that, its
    baseline being no faster than the fastest pair and its floor no less than 0)."""
    timed = [p for p in pairs if p.repeat_us]
    if len(timed) < 2:
        return set()
    fastest = min(p.passes_us for p in timed)
    limit = max(fastest * SLOW_FACTOR, fastest + SLOW_MIN_US)
    return {(p.a, p.b) for p in timed if p.passes_us > limit}


def group_time(torch, dist, group, buf, device, sleep_s: float = 0.0) -> float:
    """The median of BISECT_ITERS all-reduces in one group (a pair's; per_node: a node's),
    after a warm-up."""
    dist.all_reduce(buf, group=group)  # warm-up: the group's connections
    times = []
    for _ in range(BISECT_ITERS):
        if sleep_s:
            time.sleep(sleep_s)
        start = time.perf_counter()
        dist.all_reduce(buf, group=group)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter() - start) * 1e6)
        buf.fill_(1)
    return statistics.median(times)


def bisect_bytes(device_type: str) -> int:
    return BISECT_BYTES.get(device_type, BISECT_BYTES["cpu"])


def _host(places: dict[int, str], rank: int) -> str:
    return places.get(rank, "?")


@dataclass(frozen=True)
class PairKind:
    """The pairs of one kind (inside a node, across nodes) and the yardstick they are
    judged by: like is compared with like, a pair across nodes is not slow for being
    slower than one inside a node."""

    kind: str
    pairs: tuple[PairTime, ...]
    base_us: float  # the lower quartile of the pairs' times (a slow rank is in 2 of 3 pairs of 3 ranks)
    floor: float  # the noise floor: the upper quartile of how far the pairs' two passes disagree

    @property
    def limit_us(self) -> float:
        """Above this, and SLOW_MIN_US above the baseline, a pair of this kind is slow."""
        return max(self.base_us * (1 + self.floor) * SLOW_FACTOR, self.base_us + SLOW_MIN_US)

    @property
    def comparable(self) -> bool:
        """Two pairs or more, each timed twice: one can stand out from the others."""
        return len(self.pairs) >= 2 and all(p.repeat_us for p in self.pairs)

    def slow(self) -> list[PairTime]:
        return [p for p in self.pairs if p.held_us > self.limit_us and not p.unsteady] if self.comparable else []

    @classmethod
    def of(cls, kind: str, members: list[PairTime] | tuple[PairTime, ...]) -> "PairKind":
        """`members` judged together: their baseline and noise floor (a slow rank is in 2 of 3
        pairs of 3 ranks, hence the lower quartile for the baseline)."""
        held = sorted(p.passes_us for p in members)
        spreads = sorted(p.spread for p in members)
        return cls(kind, tuple(members), held[(len(held) - 1) // 4], spreads[(3 * (len(spreads) - 1) + 3) // 4])


def pair_kinds(pairs: list[PairTime] | tuple[PairTime, ...], hosts: dict[int, str]) -> list[PairKind]:
    """The pairs grouped by kind, each kind with its baseline and noise floor."""
    grouped: dict[str, list[PairTime]] = {}
    for p in pairs:
        if p.a not in hosts or p.b not in hosts:
            kind = UNPLACED
        else:
            kind = INSIDE if hosts[p.a] == hosts[p.b] else ACROSS
        grouped.setdefault(kind, []).append(p)
    return [PairKind.of(kind, members) for kind, members in grouped.items()]


def noise(kinds: list[PairKind]) -> str:
    """"floor 40%, margin 200%", or one floor per kind when there are several."""
    shown = [k for k in kinds if k.comparable]
    if len(shown) == 1:
        floors = f"floor {shown[0].floor:.0%}"
    else:
        floors = "floor " + ", ".join(f"{k.floor:.0%} {k.kind}" for k in shown)
    return f"{floors}, margin {SLOW_FACTOR - 1:.0%}"


def bisect_findings(
    pairs: list[PairTime] | tuple[PairTime, ...], devices: tuple[RankPlace, ...] | None, nbytes: int = 0
) -> list[Finding]:
    """The slow rank, node or link among the pairs, or an info finding when none
    stands out beyond the run's own noise."""
    if not pairs:
        return []
    hosts = {p.rank: p.host for p in devices or ()}
    ranks = sorted({r for p in pairs for r in (p.a, p.b)})
    kinds = pair_kinds(pairs, hosts)
    judged = [k for k in kinds if k.comparable]
    slow = sorted((p for k in judged for p in k.slow()), key=lambda p: -p.held_us)
    kind_of = {(p.a, p.b): k for k in kinds for p in k.pairs}
    evidence = {
        "pairs": len(pairs),
        "kinds": {
            k.kind: {"pairs": len(k.pairs), "baseline us": round(k.base_us, 1), "noise floor %": round(100 * k.floor), "limit us": round(k.limit_us)}
            for k in judged
        },
        "margin %": round(100 * (SLOW_FACTOR - 1)),
        "slow pairs": [p.said() for p in slow[:10]],
        "rechecked": [p.said() for p in pairs if p.recheck_us][:10],
        "bytes": nbytes,
    }
    if not judged:
        alone = ", ".join(f"{len(k.pairs)} {k.kind}" for k in kinds)
        return [ALLREDUCE_BISECT(case="nothing-to-compare", evidence=evidence, ranks=len(ranks), alone=alone)]
    if not slow:
        each = "; ".join(f"{len(k.pairs)} pairs {k.kind} from {k.base_us:.0f} us" for k in judged)
        cleared = [p for p in pairs if p.recheck_us]
        if cleared:
            names = ", ".join(f"{p.a}-{p.b}" + (f" ({p.passes_us / p.recheck_us:.0f}x faster when rechecked)" if p.unsteady
                                                 and p.held_us > kind_of[(p.a, p.b)].limit_us else "")
                              for p in cleared[:5]) + (" ..." if len(cleared) > 5 else "")
            each += f"; {names} was slow in both passes, not when rechecked"
        return [ALLREDUCE_BISECT(case="within-noise", evidence=evidence, ranks=len(ranks), noise=noise(kinds), kinds=each)]
    slow_ranks = []
    for r in ranks:
        own = [p for k in judged for p in k.pairs if r in (p.a, p.b)]
        theirs = [p for p in slow if r in (p.a, p.b)]
        if len(theirs) >= RANK_SHARE * len(own) and len(theirs) >= max(1, RANK_SHARE * len(slow) / 2):
            slow_ranks.append(r)
    others = [p for p in slow if p.a not in slow_ranks and p.b not in slow_ranks]
    worst = slow[0]
    against = (
        f"{worst.said().split(': ', 1)[1]}, against {kind_of[(worst.a, worst.b)].base_us:.0f} us "
        f"for the fastest quarter of the pairs {kind_of[(worst.a, worst.b)].kind}; {noise(kinds)}"
    )
    if slow_ranks and not others:
        nodes = sorted({hosts.get(r, "?") for r in slow_ranks})
        whole = [n for n in nodes if n != "?" and {r for r, h in hosts.items() if h == n} <= set(slow_ranks)]
        who = ", ".join(f"rank {r} ({_host(hosts, r)})" for r in slow_ranks)
        if whole and len(set(hosts.values())) > 1:
            who = f"node {', '.join(whole)} (ranks {', '.join(str(r) for r in slow_ranks)})"
        evidence = dict(evidence, ranks=slow_ranks, nodes=nodes)
        return [ALLREDUCE_SLOW_RANK(evidence=evidence, who=who, against=against, nodes=", ".join(nodes),
                                    ranks=", ".join(str(r) for r in slow_ranks))]
    # A slow link leaves the other pairs of its ranks at the baseline; one between fast and slow
    # fits a slow rank as well (a loaded host lifting the noise floor over one of its pairs).
    # "Between": above its kind's baseline and floor, and nearer the slow pairs than the fast ones
    # (within SLOW_FACTOR of the fastest slow pair: a slow rank's pairs share its delay).
    touched = {r for p in slow for r in (p.a, p.b)}
    least_slow = min(p.held_us for p in slow)
    between = [
        p for k in judged for p in k.pairs
        if p not in slow and (p.a in touched or p.b in touched)
        and p.held_us > max(k.limit_us / SLOW_FACTOR, k.base_us + SLOW_MIN_US, least_slow / SLOW_FACTOR)
    ]
    if between:
        mid = between[0]
        evidence = dict(evidence, between=[p.said() for p in between])
        return [ALLREDUCE_BISECT(
            case="undecided", evidence=evidence, ranks=len(ranks), noise=noise(kinds),
            slowest=f"{worst.a}-{worst.b} ({worst.held_us:.0f} us)", between=f"{mid.a}-{mid.b} ({mid.held_us:.0f} us)",
        )]  # fmt: skip
    links = [f"rank {p.a} ({_host(hosts, p.a)}) - rank {p.b} ({_host(hosts, p.b)}): {p.held_us:.0f} us" for p in slow]
    slowest = f"rank {worst.a} ({_host(hosts, worst.a)}) - rank {worst.b} ({_host(hosts, worst.b)})"
    evidence = dict(evidence, links=links[:10])
    return [ALLREDUCE_SLOW_LINK(evidence=evidence, count=len(slow), slowest=slowest, against=against)]
