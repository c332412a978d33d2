"""Controls and siblings for `gpudoctor allreduce`'s verdicts on what the ranks measured
(commands/allreduce/verify.py, per_node.py), issue 34's method: the healthy measurement
that looks most like the failure must not get the verdict (test_control_*); the nearest
one that needs another verdict gets its own (test_sibling_*). The rows are built with
the command's own make_row/summarize as tests/test_allreduce_verify.py builds them; the
per-node figures are the multi-node tier's recorded ones (tests/test_allreduce_per_node.py)."""

from __future__ import annotations

from gpudoctor.commands.allreduce.bandwidth import make_row, summarize
from gpudoctor.commands.allreduce.bisect import PairTime
from gpudoctor.commands.allreduce.per_node import PerNode, node_findings
from gpudoctor.commands.allreduce.verify import (
    NARROWING,
    NOISY_MIN_ITERS,
    NOISY_SPREAD,
    check_bandwidth,
    check_correctness,
    check_latency_noise,
    check_shm,
    narrowing_verdict,
    should_narrow,
)
from gpudoctor.checks.system import SHM_MIN_BYTES
from gpudoctor.core.findings import Severity
from test_allreduce_per_node import CONTROL, KB64, SHAPED, TWO
from test_allreduce_verify import latency_rows, rows_with


def ids(findings) -> list[str]:
    return [f.id for f in findings]


class TestAllreduceWrongResult:
    def test_control_exact_sums_on_every_rank(self):
        assert ids(check_correctness(rows_with([[0, 0], [0, 0], [0, 0]]), planned=3, world=2)) == ["allreduce-correct"]

    def test_control_a_run_cut_short_is_correct_for_what_ran_and_says_so(self):
        [f] = check_correctness(rows_with([[0, 0]]), planned=3, world=2)
        assert f.id == "allreduce-correct" and "1 of 3 sizes" in f.title

    def test_sibling_one_wrong_element_on_one_rank_names_that_rank_only(self):
        [f] = check_correctness(rows_with([[0, 0], [0, 1]], world=2), planned=2, world=2)
        assert f.id == "allreduce-wrong-result" and f.evidence["rank"] == 1 and f.severity is Severity.ERROR


class TestAllreduceCorrect:
    def test_control_a_single_wrong_element_is_not_correct(self):
        assert "allreduce-correct" not in ids(check_correctness(rows_with([[0, 0], [1, 0]]), planned=2, world=2))

    def test_control_nothing_ran_claims_nothing(self):
        assert check_correctness([], planned=3, world=2) == []

    def test_sibling_exact_results(self):
        [f] = check_correctness(rows_with([[0, 0, 0]], world=3), planned=1, world=3)
        assert f.id == "allreduce-correct" and f.severity is Severity.OK


def _spread(p90_over_fastest: float, iters: int = 20) -> dict:
    """A summary whose 4K iterations go from 100 us to `p90_over_fastest` times that."""
    half = iters // 2
    summary = summarize(latency_rows([100.0] * half + [100.0 * p90_over_fastest] * (iters - half)), 2)
    assert summary["latency_iters"] == iters
    return summary


class TestAllreduceLatencyNoisy:
    def test_control_a_spread_just_under_the_limit_is_one_figure(self):
        summary = _spread(NOISY_SPREAD * 0.95)
        assert summary["latency_p90_us"] / summary["latency_min_us"] < NOISY_SPREAD
        assert check_latency_noise(summary, (11.5, 11.0, 9.0), 2) == []
        assert "(noisy" not in check_bandwidth(summary, 2)[0].title

    def test_control_too_few_iterations_say_nothing_of_their_spread(self):
        assert check_latency_noise(_spread(30.0, iters=NOISY_MIN_ITERS - 1), (11.5, 11.0, 9.0), 2) == []

    def test_sibling_a_spread_past_the_limit_is_info_with_the_load(self):
        [f] = check_latency_noise(_spread(NOISY_SPREAD * 1.5), (11.5, 11.0, 9.0), 2)
        assert f.id == "allreduce-latency-noisy" and f.severity is Severity.INFO and "load average 11.5" in f.why


class TestAllreduceBandwidth:
    def test_control_no_size_ran_reports_no_bandwidth(self):
        assert check_bandwidth(summarize([], 2), 2) == []

    def test_sibling_the_figures_of_what_ran(self):
        [f] = check_bandwidth(summarize(rows_with([[0, 0], [0, 0]]), 2), 2)
        assert f.id == "allreduce-bandwidth" and f.severity is not Severity.ERROR


class TestAllreduceShm:
    def test_control_gloo_does_not_use_dev_shm(self):
        assert check_shm(64 << 20, "gloo", 8) == []

    def test_control_exactly_the_floor_is_enough(self):
        [f] = check_shm(SHM_MIN_BYTES, "nccl", 2)
        assert f.severity is Severity.OK

    def test_sibling_a_docker_default_64m_under_nccl(self):
        [f] = check_shm(64 << 20, "nccl", 2)
        assert f.id == "allreduce-shm" and f.severity is Severity.WARN and "--shm-size" in f.fix


class TestAllreduceSlowNode:
    def test_control_the_unshaped_two_node_run(self):
        [f] = node_findings(CONTROL)
        assert f.severity is Severity.OK and "no node stands out" in f.title

    def test_control_one_pass_hiccup_on_one_node(self):
        hiccup = PerNode(KB64, TWO, (PairTime(0, 2, 189.4, 157.1), PairTime(2, 0, 27572.6, 145.8)))
        assert [f.severity for f in node_findings(hiccup)] == [Severity.OK]

    def test_control_one_node_has_nothing_to_compare_with(self):
        assert node_findings(PerNode(KB64, TWO[:1], ())) == []

    def test_sibling_the_shaped_nic_in_both_passes(self):
        [f] = node_findings(SHAPED)
        assert f.id == "allreduce-slow-node" and f.severity is Severity.WARN and f.evidence["slow"] == ["n1"]


def _narrowed(*worked: bool):
    return narrowing_verdict(list(zip(NARROWING, worked)), 4 << 20, None)


class TestNcclP2pBroken:
    def test_control_when_p2p_off_still_fails_p2p_is_not_blamed(self):
        assert _narrowed(False, True).id == "nccl-shm-broken"

    def test_control_a_gloo_run_that_failed_is_not_narrowed(self):
        assert not should_narrow("gloo", True, False) and not should_narrow("nccl", True, True)

    def test_sibling_works_with_p2p_disabled(self):
        f = _narrowed(True)
        assert f.id == "nccl-p2p-broken" and f.evidence["reruns"] == {"NCCL_P2P_DISABLE=1": "works"}


class TestNcclShmBroken:
    def test_control_p2p_off_already_works(self):
        assert _narrowed(True).id == "nccl-p2p-broken"

    def test_sibling_works_with_shm_disabled(self):
        assert _narrowed(False, True).id == "nccl-shm-broken"


class TestNcclBrokenGlooWorks:
    def test_control_gloo_failing_too_is_not_nccl_broken(self):
        assert _narrowed(False, False, False).id == "nccl-narrowing-inconclusive"

    def test_sibling_only_gloo_works(self):
        f = _narrowed(False, False, True)
        assert f.id == "nccl-broken-gloo-works" and "NCCL_DEBUG=INFO" in f.fix


class TestNcclNarrowingInconclusive:
    def test_control_a_rerun_that_works_decides_it(self):
        assert _narrowed(False, False, True).id != "nccl-narrowing-inconclusive"

    def test_sibling_every_rerun_failed_says_what_would_decide(self):
        f = _narrowed(False, False, False)
        assert f.id == "nccl-narrowing-inconclusive" and len(f.evidence["reruns"]) == 3 and f.fix


# One H200, `allreduce --nproc 1 --device cuda` (tests/fixtures/gpu_truth/h200/ar1.out, ar-rs.out):
# an in-place all_reduce of 4K, 64M and 1G each took ~110 µs, i.e. NCCL moved nothing.
H200_ONE_RANK_ALL_REDUCE = [(4096, 114.46), (67108864, 110.62), (1073741824, 107.65)]
H200_ONE_RANK_REDUCE_SCATTER = [(1 << 20, 69.4), (256 << 20, 129.1)]


def _h200_rows(op, sizes, dtype="float32"):
    width = 2 if dtype == "bfloat16" else 4
    return [make_row(op, nbytes, nbytes // width, dtype, 1, [0], [[t] * 10]) for nbytes, t in sizes]


class TestAllreduceBandwidthOneRankInPlace:
    """`allreduce-bandwidth` case one-rank-in-place: no bandwidth from a call that moved nothing."""

    def test_control_one_rank_all_reduce_states_no_bandwidth(self):
        [f] = check_bandwidth(summarize(_h200_rows("all_reduce", H200_ONE_RANK_ALL_REDUCE), 3), 1)
        assert "no bandwidth is measured" in f.title and "GB/s" not in f.title
        assert "peak_algbw_gbps" not in f.evidence and "a call costs 114.5 µs at 4K" in f.title

    def test_sibling_one_rank_reduce_scatter_copies_so_its_algbw_stands(self):
        [f] = check_bandwidth(summarize(_h200_rows("reduce_scatter", H200_ONE_RANK_REDUCE_SCATTER, "bfloat16"), 2), 1)
        assert "peak algbw 2079" in f.title
        assert f.evidence["peak_algbw_gbps"] > 2000

    def test_sibling_two_ranks_all_reduce_report_busbw(self):
        [f] = check_bandwidth(summarize(rows_with([[0, 0], [0, 0]]), 2), 2)
        assert "peak busbw" in f.title
