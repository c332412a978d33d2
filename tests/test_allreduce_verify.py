"""The pure checks of `allreduce`: /dev/shm, correctness, bandwidth summary,
the GPU link verdict, and the NCCL narrowing decisions."""

import pytest

from gpudoctor.commands.allreduce.bandwidth import make_row, summarize
from gpudoctor.commands.allreduce.verify import (
    check_latency_noise,
    NARROWING,
    LinkFacts,
    check_bandwidth,
    check_correctness,
    check_link_speed,
    check_shm,
    failing_size_index,
    narrowing_verdict,
    next_attempt,
    should_narrow,
)
from gpudoctor.core.findings import Severity


def rows_with(wrong_by_size, world=2, op="all_reduce"):
    return [
        make_row(op, 4096 << (4 * i), 1024 << (4 * i), "float32", world, wrong, [[100.0 * (i + 1)]] * world)
        for i, wrong in enumerate(wrong_by_size)
    ]


def test_shm_is_checked_for_nccl_between_local_ranks_only():
    small = check_shm(64 << 20, "nccl", 8)
    assert [f.id for f in small] == ["allreduce-shm"] and small[0].severity is Severity.WARN
    assert "64 MiB" in small[0].title and "--shm-size" in small[0].fix
    assert check_shm(16 << 30, "nccl", 8)[0].severity is Severity.OK
    assert check_shm(64 << 20, "gloo", 8) == []
    assert check_shm(64 << 20, "nccl", 1) == []
    assert check_shm(None, "nccl", 8) == []


def test_shm_floor_is_the_one_check_uses():
    from gpudoctor.checks.system import SHM_MIN_BYTES

    assert check_shm(SHM_MIN_BYTES - (1 << 20), "nccl", 2)[0].severity is Severity.WARN
    assert check_shm(SHM_MIN_BYTES, "nccl", 2)[0].severity is Severity.OK


def test_exact_results_are_one_passed_line():
    found = check_correctness(rows_with([[0, 0], [0, 0]]), planned=2, world=2)
    assert [(f.id, f.severity) for f in found] == [("allreduce-correct", Severity.OK)]
    assert "every size" in found[0].title
    partial = check_correctness(rows_with([[0, 0]]), planned=3, world=2)
    assert "1 of 3 sizes" in partial[0].title


def test_a_wrong_result_is_an_error_naming_the_rank_and_size():
    found = check_correctness(rows_with([[0, 0], [0, 5], [2, 1]], world=2), planned=3, world=2)
    assert [f.id for f in found] == ["allreduce-wrong-result"] * 2
    rank0, rank1 = found
    assert all(f.severity is Severity.ERROR for f in found)
    assert rank0.title.startswith("rank 0 ") and "at 1M" in rank0.title
    assert rank1.title.startswith("rank 1 ") and "5 of 16384 elements at 64K" in rank1.title
    assert "1 more size" in rank1.title
    assert rank1.evidence["wrong elements by size"] == {"64K": 5, "1M": 1}
    assert rank1.fix and rank1.why


def test_bandwidth_line_has_peak_busbw_and_latency():
    rows = rows_with([[0, 0], [0, 0]])
    (f,) = check_bandwidth(summarize(rows, 2), world=2)
    assert f.id == "allreduce-bandwidth" and f.severity is Severity.OK
    assert "peak busbw" in f.title and "latency 100.0 µs at 4K" in f.title
    (one,) = check_bandwidth(summarize(rows_with([[0]], world=1), 1), world=1)
    assert "one rank" in one.title
    assert check_bandwidth(summarize([], 2), world=2) == []


def link(kind="nvlink", nvlinks=12, topology=("NV12",), p2p=("ok",), hosts=1, env=None):
    return LinkFacts(("H100", "H100"), hosts, kind, nvlinks, topology, p2p, env=env or {})


def big_summary(busbw, largest=256 << 20):
    return {"peak_busbw_gbps": busbw, "peak_busbw_mean_gbps": busbw, "largest_bytes": largest, "sizes_run": 3}


def test_slow_busbw_over_nvlink_asks_whether_p2p_is_off():
    (f,) = check_link_speed(big_summary(9.0), 2, link(env={"NCCL_P2P_DISABLE": "1"}))
    assert f.id == "allreduce-link-speed" and f.severity is Severity.WARN
    assert "busbw 9.0 GB/s between GPUs joined by NVLink" in f.title and "NCCL_P2P_DISABLE is set" in f.title
    (g,) = check_link_speed(big_summary(9.0), 2, link())
    assert "P2P is off or blocked?" in g.title
    (h,) = check_link_speed(big_summary(9.0), 2, link(p2p=("disabled by regkey",)))
    assert "disabled by regkey" in h.title


def test_fast_busbw_over_nvlink_passes():
    (f,) = check_link_speed(big_summary(350.0), 2, link())
    assert f.severity is Severity.OK and "12 NVLinks" in f.title


def test_pcie_verdicts():
    assert check_link_speed(big_summary(11.0), 2, link("pcie", 0, ("PHB",)))[0].severity is Severity.OK
    slow = check_link_speed(big_summary(0.8), 2, link("pcie", 0, ("PHB",)))[0]
    assert slow.severity is Severity.WARN and "PCIe" in slow.title


def test_no_verdict_without_a_meaningful_measurement():
    assert check_link_speed(big_summary(9.0), 2, None) == []
    assert check_link_speed(big_summary(9.0), 1, link()) == []
    small = check_link_speed(big_summary(9.0, largest=1 << 20), 2, link())[0]
    assert small.severity is Severity.INFO and "latency-bound" in small.title
    nodes = check_link_speed(big_summary(9.0), 2, link(hosts=2))[0]
    assert nodes.severity is Severity.INFO and "2 hosts" in nodes.title
    unknown = check_link_speed(big_summary(9.0), 2, LinkFacts(("a", "b"), 1, "unknown", None, reason="NVML unavailable"))[0]
    assert unknown.severity is Severity.INFO and "NVML unavailable" in unknown.title


def test_narrowing_is_only_for_failed_nccl_runs():
    assert should_narrow("nccl", run_failed=True, interrupted=False)
    assert not should_narrow("gloo", run_failed=True, interrupted=False)
    assert not should_narrow("nccl", run_failed=False, interrupted=False)
    assert not should_narrow("nccl", run_failed=True, interrupted=True)


def test_failing_size_is_where_the_furthest_rank_was():
    assert failing_size_index([3, 2], 5) == 2  # rank 1 hung before size 3's heartbeat; rank 0 waits in size 3
    assert failing_size_index([0, 0], 5) == 0  # failed before the first size
    assert failing_size_index([], 5) == 0
    assert failing_size_index([9, 9], 5) == 4  # finished heartbeat: the last size


def test_reruns_go_p2p_then_shm_then_gloo_and_stop_at_the_first_that_works():
    p2p, shm, gloo = NARROWING
    assert [a.env for a in NARROWING[:2]] == [{"NCCL_P2P_DISABLE": "1"}, {"NCCL_SHM_DISABLE": "1"}]
    assert gloo.backend == "gloo"
    assert next_attempt([]) is p2p
    assert next_attempt([(p2p, False)]) is shm
    assert next_attempt([(p2p, False), (shm, False)]) is gloo
    assert next_attempt([(p2p, False), (shm, False), (gloo, False)]) is None
    assert next_attempt([(p2p, True)]) is None


@pytest.mark.parametrize(
    "results, finding_id, says",
    [
        ([True], "nccl-p2p-broken", "works with P2P disabled"),
        ([False, True], "nccl-shm-broken", "shared-memory"),
        ([False, False, True], "nccl-broken-gloo-works", "gloo works"),
        ([False, False, False], "nccl-narrowing-inconclusive", "not a transport problem"),
    ],
)
def test_narrowing_verdicts_name_the_broken_transport(results, finding_id, says):
    done = list(zip(NARROWING, results))
    f = narrowing_verdict(done, 4 << 20, "/tmp/run/nccl-narrowing.log")
    assert f.id == finding_id and f.severity is Severity.ERROR
    assert says in f.title and "at 4M" in f.title
    assert f.evidence["NCCL_DEBUG=INFO log"] == "/tmp/run/nccl-narrowing.log"
    assert len(f.evidence["reruns"]) == len(results)
    assert f.fix and f.why


def latency_rows(times_4k):
    return [
        make_row("all_reduce", 4096, 1024, "float32", 2, [0, 0], [times_4k, [100.0] * len(times_4k)]),
        make_row("all_reduce", 1 << 20, 1 << 18, "float32", 2, [0, 0], [[500.0] * 20, [500.0] * 20]),
    ]


def test_latency_whose_iterations_spread_widely_is_called_noisy_with_the_load():
    # The numbers: one run's iterations of 4K from 290 to 3392 us.
    summary = summarize(latency_rows([290.0] * 10 + [3392.0] * 10), 2)
    [noisy] = check_latency_noise(summary, (11.5, 11.9, 9.0), 2)
    assert noisy.id == "allreduce-latency-noisy" and noisy.severity is Severity.INFO
    assert "290.0 to 3392.0 µs" in noisy.title and noisy.evidence["spread"] == 11.7
    assert "load average 11.5 on 2 core(s)" in noisy.why
    assert "(noisy" in check_bandwidth(summary, 2)[0].title
    idle = check_latency_noise(summary, (0.1, 0.1, 0.1), 2)[0]
    assert "another job on the same cores" in idle.why


def test_steady_or_too_few_iterations_are_not_called_noisy():
    steady = summarize(latency_rows([100.0, 110.0, 120.0, 150.0, 180.0] * 4), 2)
    assert check_latency_noise(steady, (0.1, 0.1, 0.1), 2) == []
    assert "(noisy" not in check_bandwidth(steady, 2)[0].title
    few = summarize(latency_rows([100.0, 900.0, 100.0]), 2)
    assert check_latency_noise(few, None, None) == []


H100 = "NVIDIA H100 80GB HBM3"


def h100s(n=8, nvlinks=18, env=None, pcie=()):
    return LinkFacts((H100,) * n, 1, "nvlink", nvlinks, ("NODE",), ("ok",), env=env or {}, pcie=pcie)


def test_the_share_of_what_the_same_gpus_reach_in_a_published_run():
    (f,) = check_link_speed(big_summary(430.0, largest=1 << 30), 8, h100s())
    assert f.severity is Severity.OK
    assert "90 % of what 8x H100 SXM over NVLink 4 (NVSwitch) reaches (480 GB/s, nccl-tests' mean-time busbw)" in f.title
    assert f.evidence["source"] == "https://github.com/NVIDIA/nccl-tests/issues/212"
    assert f.evidence["share of published"] == 0.9


def test_a_low_share_at_full_size_is_a_warning_with_the_link_facts():
    link = h100s(env={"NCCL_ALGO": "Ring", "NCCL_NVLS_ENABLE": "0"}, pcie=("gen5 x16",) * 7 + ("gen5 x8 (of x16)",))
    (f,) = check_link_speed(big_summary(180.0, largest=1 << 30), 8, link)
    assert f.severity is Severity.WARN
    assert f.title == "busbw 180.0 GB/s is 38 % of what 8x H100 SXM over NVLink 4 (NVSwitch) reaches (480 GB/s, nccl-tests' mean-time busbw)"
    assert "NCCL_ALGO=Ring" in f.why and "a PCIe link at gen5 x8 (of x16)" in f.why and "18 NVLinks" in f.why
    assert f.evidence["PCIe links"][-1] == "gen5 x8 (of x16)"
    (small,) = check_link_speed(big_summary(180.0, largest=256 << 20), 8, link)  # peaks need 1G
    assert small.severity is Severity.OK and "sweep to 1G for the peak" in small.title


def test_no_published_figure_no_share():
    # 2 A100s: no figure a source states as good for that shape, so no share is claimed
    a100s = LinkFacts(("NVIDIA A100-SXM4-80GB",) * 2, 1, "nvlink", 12, ("NV12",), ("ok",))
    (f,) = check_link_speed(big_summary(150.0), 2, a100s)
    assert "% of what" not in f.title and "source" not in f.evidence
    assert f.evidence["published busbw"] == "no published figure for this shape (2x NVIDIA A100-SXM4-80GB over nvlink)"
    (g,) = check_link_speed(big_summary(30.0, largest=1 << 30), 8, LinkFacts(("NVIDIA GeForce RTX 5090",) * 8, 1, "pcie", 0, ("SYS",), ("ok",)))
    assert g.severity is Severity.OK and "107 % of what 8x RTX 5090 over PCIe Gen5" in g.title
