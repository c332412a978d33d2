"""allreduce --bisect's schedule and verdict (pure): every pair measured once in
disjoint rounds, and the slow rank, node or link named from pair times. The
first case's times are those a real run measured (`GPUDOCTOR_FAULT=2:slow
gpudoctor allreduce --nproc 4 --sizes 64K --bisect` on a busy 2-core machine)."""

import itertools

import pytest

from gpudoctor.commands.allreduce.bisect import MAX_PAIRS_RANKS, PairTime, bisect_findings, pair_rounds
from gpudoctor.probe.links import RankPlace


@pytest.mark.parametrize("world", [2, 3, 4, 5, 8, 16, 17, 20])
def test_rounds_are_disjoint_and_cover_the_pairs(world):
    rounds = pair_rounds(world)
    for pairs in rounds:
        ranks = [r for p in pairs for r in p]
        assert len(ranks) == len(set(ranks))  # a rank is in one pair per round
    seen = [p for r in rounds for p in r]
    assert len(seen) == len(set(seen))
    if world <= MAX_PAIRS_RANKS:
        assert set(seen) == set(itertools.combinations(range(world), 2)) and len(rounds) <= world
    else:  # ring neighbours: every rank in two pairs, in at most 3 rounds
        assert len(rounds) <= 3 and all(sum(r in p for p in seen) == 2 for r in range(world))


def places(hosts):
    return tuple(RankPlace(r, h, r) for r, h in enumerate(hosts))


def pairs(times, again=1.1):
    """Pairs timed twice: the repeat `again` times the first (a steady host's noise)."""
    return [PairTime(a, b, us, round(us * again, 1)) for (a, b), us in times.items()]


def test_a_slow_rank_is_named():
    measured = {(0, 3): 4310.8, (1, 2): 23391.2, (0, 2): 21479.3, (1, 3): 1802.1, (0, 1): 474.8, (2, 3): 24958.8}
    [f] = bisect_findings(pairs(measured), places(["vm"] * 4), 65536)
    assert f.id == "allreduce-slow-rank" and f.evidence["ranks"] == [2]
    assert f.title.startswith("rank 2 (vm): every all-reduce with it is slow in both passes")
    assert "floor 10%, margin 200%" in f.title


def test_a_slow_node_is_named():
    hosts = ["a", "a", "b", "b", "c", "c"]
    times = {p: (9000.0 if "b" in (hosts[p[0]], hosts[p[1]]) else 500.0) for p in itertools.combinations(range(6), 2)}
    [f] = bisect_findings(pairs(times), places(hosts), 1 << 24)
    assert f.id == "allreduce-slow-rank" and f.title.startswith("node b (ranks 2, 3)")


def test_a_slow_link_is_named():
    times = {p: 500.0 for p in itertools.combinations(range(4), 2)}
    times[(1, 3)] = 8000.0
    [f] = bisect_findings(pairs(times), places(["a", "a", "b", "b"]), 1 << 24)
    assert f.id == "allreduce-slow-link" and "rank 1 (a) - rank 3 (b)" in f.title


def test_even_pairs_are_ok_and_two_ranks_cannot_tell_rank_from_link():
    times = {p: 500.0 + 100 * p[0] for p in itertools.combinations(range(4), 2)}
    [f] = bisect_findings(pairs(times), None, 65536)
    assert f.id == "allreduce-bisect" and f.severity.value == "info"
    assert "stands out beyond the noise (floor 10%, margin 200%)" in f.title
    [f] = bisect_findings([PairTime(0, 1, 9000.0, 9000.0)], None, 65536)
    assert f.id == "allreduce-bisect" and f.title.startswith("nothing to compare")  # one pair is its own baseline
    assert bisect_findings([], None) == []
