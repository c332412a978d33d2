"""The straggler verdict on recorded summaries: each folder under
tests/fixtures/steps holds the rank<N>.steps.json files that the ranks of
tests/scripts/straggler/job.py published under `torchrun ... gpudoctor run`
(the folder's name says which rank was made slow, in which phase), plus
made-up summaries for the cases one machine cannot record (several nodes)."""

import json
from pathlib import Path

import pytest

from gpudoctor.knowledge.stragglers import (
    PHASES,
    RankSteps,
    analyze_steps,
    late_floor_ms,
    verdict_json,
)
from gpudoctor.render.step_table import status_line, steps_table
from gpudoctor.hooks.step_clock import decode_steps, encode_steps

FIXTURES = Path(__file__).parent / "fixtures" / "steps"


def recorded(name: str) -> list[RankSteps]:
    out = []
    for path in sorted((FIXTURES / name).glob("rank*.steps.json")):
        rank = int(path.name[4:].split(".")[0])
        steps = decode_steps(path.read_text(), rank)
        assert steps is not None, path
        out.append(steps)
    return out


@pytest.mark.parametrize(
    "name, rank, phase",
    [
        ("forward_rank1_of_3", 1, "forward"),
        ("data_rank0_of_2", 0, "data"),
        ("other_rank2_of_3", 2, "other"),
    ],
)
def test_the_slow_rank_and_its_phase_are_named(name, rank, phase):
    verdict = analyze_steps(recorded(name))
    [finding] = verdict.findings
    assert finding.id == "rank-straggler"
    assert finding.evidence["rank"] == rank and finding.evidence["phase"] == phase
    assert f"rank {rank} holds the job back" in finding.title
    assert finding.evidence["speedup if it kept up"] > 1.5
    assert verdict.slowest() == (rank, phase)
    assert "gpudoctor check" in finding.fix or phase in ("data", "other")


@pytest.mark.parametrize("name", ["balanced_2", "balanced_3"])
def test_a_balanced_job_gets_no_finding(name):
    verdict = analyze_steps(recorded(name))
    assert verdict.findings == ()
    assert len(verdict.rows) == int(name[-1]) and verdict.steps_per_s > 1
    # Well under the noise floor, which is what keeps it quiet.
    step = verdict.rows[0].step_ms
    assert max(r.late_ms for r in verdict.rows) < late_floor_ms(step) / 2


def _records(steps: int, waits_us: list[int], work_us: int = 20_000, phase: int = 1) -> list[tuple[int, ...]]:
    """Per-rank records with the given wait per step and `work_us` in `phase`."""
    out = []
    for wait in waits_us:
        recs = []
        for i in range(steps):
            phases = [0] * len(PHASES)
            phases[phase] = work_us + (max(waits_us) - wait)  # the late rank works longer
            phases[-1] = wait
            recs.append((i, 1000 * i, sum(phases), *phases))
        out.append(tuple(recs))
    return out


def test_every_rank_of_one_node_late_names_the_node():
    waits = [50_000, 50_000, 1_000, 1_000]
    nodes = ["a", "a", "b", "b"]
    ranks = [RankSteps(r, nodes[r], 10, "optimizer", recs) for r, recs in enumerate(_records(10, waits))]
    [finding] = analyze_steps(ranks).findings
    assert finding.evidence["late node"] == "b"
    assert finding.title.startswith("node b (ranks 2, 3) holds the job back")


def test_waiting_with_nobody_late_points_at_the_link():
    ranks = [RankSteps(r, "a", 10, "optimizer", recs) for r, recs in enumerate(_records(10, [30_000, 30_000]))]
    [finding] = analyze_steps(ranks).findings
    assert finding.id == "collective-wait" and "allreduce --bisect" in finding.fix


def test_too_few_common_steps_give_no_verdict():
    # Five steps each, two of them warm-up: three to compare, fewer than a verdict needs.
    ranks = [RankSteps(r, "a", 5, "optimizer", recs) for r, recs in enumerate(_records(5, [1, 90_000]))]
    verdict = analyze_steps(ranks)
    assert verdict.rows == () and verdict.findings == () and verdict.slowest() is None
    assert steps_table(verdict_json(verdict)) == ""
    assert "waiting" in status_line(verdict_json(verdict))


def test_the_summary_survives_the_codec_and_renders():
    [one, *_] = recorded("forward_rank1_of_3")
    assert decode_steps(encode_steps(one), one.rank) == one
    assert decode_steps("not json", 0) is None
    data = verdict_json(analyze_steps(recorded("forward_rank1_of_3")))
    json.dumps(data)
    table = steps_table(data, "[rank 0] ")
    assert table.splitlines()[1].split()[2:] == ["rank", "step", "ms", *PHASES, "late", "ms", "last"]
    assert "slowest rank 1" in status_line(data) and "forward" in status_line(data)


def test_live_summaries_that_share_no_step_still_give_the_live_line():
    # Published a second apart by a fast loop: rank 1's newest steps are 500 steps behind rank 0's.
    [a, b] = recorded("data_rank0_of_2")
    b = RankSteps(b.rank, b.node, b.steps, b.delimiter, tuple((r[0] - 500, *r[1:]) for r in b.recent))
    assert analyze_steps([a, b]).rows == ()
    live = analyze_steps([a, b], live=True)
    assert live.findings == () and live.slowest() == (0, "data")
    assert "slowest rank 0" in status_line(verdict_json(live))


def test_a_rank_late_now_and_then_is_named_by_how_much():
    # Rank 0 saves a checkpoint (1 s, between the phases) every 10th step: last at 10 % of the
    # steps only, but its lateness dwarfs every other rank's.
    recs = {0: [], 1: [], 2: []}
    for i in range(40):
        save = 1_000_000 if i % 10 == 5 else 0
        for rank in recs:
            late_self = save if rank == 0 else 0
            wait = 1_000 + (save - late_self) + (300 * ((i + rank) % 3))
            phases = [0, 20_000, 1_000, 100, 500 + late_self, wait]
            recs[rank].append((i, 0, sum(phases), *phases))
    ranks = [RankSteps(r, "a", 40, "optimizer", tuple(v)) for r, v in recs.items()]
    [finding] = analyze_steps(ranks).findings
    assert finding.evidence["rank"] == 0 and finding.evidence["phase"] == "other"
    assert finding.evidence["last to arrive at"] < 0.7
