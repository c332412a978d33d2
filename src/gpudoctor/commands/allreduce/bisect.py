"""`gpudoctor allreduce --bisect`: when the job's bandwidth is low, which rank,
node or link is it? The ranks measure the same all-reduce in pairs, every pair of
a round at the same time (a round-robin schedule: n-1 rounds of n/2 disjoint
pairs, bounded by MAX_PAIRS_RANKS; above it, each rank with its ring neighbours
in 2 or 3 rounds). A slow rank makes every pair it is in slow; a slow link only
the pairs across it; a slow node every pair of its ranks with the others.

The rank side (`measure_pairs`) runs inside `measure.run_rank` after the sweep;
the verdict (`bisect_findings`) is pure.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.links import RankPlace

MAX_PAIRS_RANKS = 16  # all pairs up to here (120 pairs in 15 rounds); ring neighbours above
# The all-reduce each pair times: on GPUs big enough to be bandwidth-bound on a slow path;
# on CPU (gloo) small enough that the host's own noise does not drown a slow rank.
BISECT_BYTES = {"cuda": 16 << 20, "cpu": 64 << 10}
BISECT_ITERS = 5
SLOW_FACTOR = 3.0  # a pair this many times slower than the baseline pair (see bisect_findings) is slow
SLOW_MIN_US = 1000.0  # ... and by at least this much (a busy host jitters small times by more than 3x)
RANK_SHARE = 0.75  # a rank in at least this share of slow pairs, of its own, is the slow one


@dataclass(frozen=True)
class PairTime:
    """The median time of one all-reduce between ranks a and b (the slower side's)."""

    a: int
    b: int
    us: float


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


def measure_pairs(torch, dist, rank: int, world: int, device, dtype, slow_s: float = 0.0) -> list[PairTime]:
    """Every rank calls this (group creation is collective). Returns, on rank 0,
    every pair's time; elsewhere an empty list. `slow_s`: the `slow` fault's sleep
    before each call (GPUDOCTOR_FAULT, docs/commands/allreduce.md)."""
    rounds = pair_rounds(world)
    groups = {pair: dist.new_group(list(pair)) for r in rounds for pair in r}  # the same order on every rank
    count = max(1, bisect_bytes(device.type) // torch.tensor([], dtype=dtype).element_size())
    buf = torch.ones(count, dtype=dtype, device=device)
    mine = []
    for pairs in rounds:
        pair = next((p for p in pairs if rank in p), None)
        took = 0.0
        if pair is not None:
            group = groups[pair]
            dist.all_reduce(buf, group=group)  # warm-up: the pair's connection
            times = []
            for _ in range(BISECT_ITERS):
                if slow_s:
                    time.sleep(slow_s)
                start = time.perf_counter()
                dist.all_reduce(buf, group=group)
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                times.append((time.perf_counter() - start) * 1e6)
                buf.fill_(1)
            took = statistics.median(times)
        mine.append(took)
        dist.barrier()  # the next round's pairs start together
    everyone = [torch.zeros(len(rounds), dtype=torch.float64, device=device) for _ in range(world)]
    dist.all_gather(everyone, torch.tensor(mine, dtype=torch.float64, device=device))
    if rank != 0:
        return []
    times_by_rank = [t.tolist() for t in everyone]
    out = []
    for index, pairs in enumerate(rounds):
        for a, b in pairs:
            out.append(PairTime(a, b, round(max(times_by_rank[a][index], times_by_rank[b][index]), 1)))
    return out


def bisect_bytes(device_type: str) -> int:
    return BISECT_BYTES.get(device_type, BISECT_BYTES["cpu"])


def _host(places: dict[int, str], rank: int) -> str:
    return places.get(rank, "?")


def bisect_findings(
    pairs: list[PairTime] | tuple[PairTime, ...], devices: tuple[RankPlace, ...] | None, nbytes: int = 0
) -> list[Finding]:
    """The slow rank, node or link among the pairs, or an ok finding when none is."""
    if not pairs:
        return []
    hosts = {p.rank: p.host for p in devices or ()}
    ranks = sorted({r for p in pairs for r in (p.a, p.b)})
    # The baseline is the lower quartile: a slow rank is in 2 of 3 pairs of 3 ranks, a slow
    # node in more than half of the pairs of 2 nodes; the median would be one of them.
    times = sorted(p.us for p in pairs)
    base = times[(len(times) - 1) // 4]
    slow = [p for p in pairs if p.us > SLOW_FACTOR * base and p.us - base > SLOW_MIN_US]
    evidence = {
        "pairs": len(pairs),
        "baseline pair us": round(base, 1),
        "slow pairs": [f"{p.a}-{p.b}: {p.us:.0f} us" for p in sorted(slow, key=lambda p: -p.us)[:10]],
        "bytes": nbytes,
    }
    if not slow:
        title = f"no slow rank or link: every pair of {len(ranks)} ranks all-reduces within {SLOW_FACTOR:g}x of the fastest quarter's ({base:.0f} us)"
        return [Finding("allreduce-bisect", Severity.OK, title, evidence, area="allreduce")]
    slow_ranks = []
    for r in ranks:
        own = [p for p in pairs if r in (p.a, p.b)]
        theirs = [p for p in slow if r in (p.a, p.b)]
        if len(theirs) >= RANK_SHARE * len(own) and len(theirs) >= max(1, RANK_SHARE * len(slow) / 2):
            slow_ranks.append(r)
    others = [p for p in slow if p.a not in slow_ranks and p.b not in slow_ranks]
    out = []
    if slow_ranks and not others:
        nodes = sorted({hosts.get(r, "?") for r in slow_ranks})
        whole = [n for n in nodes if n != "?" and {r for r, h in hosts.items() if h == n} <= set(slow_ranks)]
        who = ", ".join(f"rank {r} ({_host(hosts, r)})" for r in slow_ranks)
        if whole and len(set(hosts.values())) > 1:
            who = f"node {', '.join(whole)} (ranks {', '.join(str(r) for r in slow_ranks)})"
        slowest = max(p.us for p in slow)
        title = f"{who}: every all-reduce with it is slow (up to {slowest:.0f} us against {base:.0f} us for the fastest quarter of the pairs)"
        evidence = dict(evidence, ranks=slow_ranks, nodes=nodes)
        fix = (
            f"gpudoctor check on {', '.join(nodes)} (a throttled or slower GPU, a busy host, a NIC at lower speed); "
            f"to confirm, run the job without rank(s) {', '.join(str(r) for r in slow_ranks)}"
        )
        why = "A collective runs at the speed of its slowest member: one slow rank slows every all-reduce of the job."
        out.append(Finding("allreduce-slow-rank", Severity.WARN, title, evidence, why, fix, area="allreduce"))
        return out
    links = [f"rank {p.a} ({_host(hosts, p.a)}) - rank {p.b} ({_host(hosts, p.b)}): {p.us:.0f} us" for p in slow]
    title = f"{len(slow)} slow link(s) between ranks, the slowest {links[0]} (the fastest quarter of the pairs: {base:.0f} us)"
    evidence = dict(evidence, links=links[:10])
    return [Finding("allreduce-slow-link", Severity.WARN, title, evidence, _LINK_WHY, _LINK_FIX, area="allreduce")]


_LINK_WHY = (
    "Only the all-reduces across these ranks are slow: the path between them (a NIC, a switch port, a PCIe "
    "or NVLink path, a socket interface chosen by NCCL_SOCKET_IFNAME) is slower than the others."
)
_LINK_FIX = (
    "compare the two ends: gpudoctor check on both nodes (NIC speed, NCCL_SOCKET_IFNAME, NCCL_IB_HCA); "
    "NCCL_DEBUG=INFO shows the transport each pair uses"
)
