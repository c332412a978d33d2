"""The allreduce job with real ranks: the NCCL narrowing path run for real on a
machine without CUDA (every NCCL attempt fails, gloo works)."""

import os

import pytest

from gpudoctor.commands.allreduce.job import NARROWING_LOG, Hooks, run_local
from gpudoctor.commands.allreduce.options import Sweep
from gpudoctor.core.exit_code import report_exit
from orphans import TAG_ENV, kill_all, leftovers, new_tag

torch = pytest.importorskip("torch")


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="needs NCCL to fail: a machine without CUDA")
def test_a_failing_nccl_run_is_narrowed_down_to_gloo_and_the_log_is_kept(monkeypatch):
    tag = new_tag()
    monkeypatch.setenv(TAG_ENV, tag)
    monkeypatch.delenv("GPUDOCTOR_FAULT", raising=False)
    notes = []
    # The plan would refuse NCCL here; a Sweep built by hand runs it anyway, so the
    # ranks fail the way NCCL ranks fail on a broken machine: every rank raises.
    sweep = Sweep(
        backend="nccl", device="cuda", nproc=2, op="all_reduce", dtype="float32", sizes=(4096, 65536), iters=2, warmup=1,
        timeout_s=30.0, pg_timeout_s=30.0,
    )
    try:
        outcome = run_local(sweep, Hooks(on_note=notes.append))
        ids = [f.id for f in outcome.report.findings]
        assert "rank-raised" in ids
        verdict = next(f for f in outcome.report.findings if f.id.startswith("nccl-"))
        assert verdict.id == "nccl-broken-gloo-works"
        assert verdict.evidence["reruns"] == {
            "NCCL_P2P_DISABLE=1": "fails",
            "NCCL_SHM_DISABLE=1": "fails",
            "gloo on CPU": "works",
        }
        assert verdict.evidence["failing size"] == "4K"
        log = verdict.evidence["NCCL_DEBUG=INFO log"]
        assert os.path.basename(log) == NARROWING_LOG
        text = open(log).read()
        assert text.count("=====") == 2 * 4  # the original run and three reruns
        assert "===== NCCL_P2P_DISABLE=1: rank " in text and "_cuda_setDevice" in text  # the failing rank's traceback
        assert "===== gloo on CPU: rank " in text and text.rstrip().count(", ok =====") == 1
        summary = outcome.report.data["summary"]
        assert [n["rerun"] for n in summary["narrowing"]] == ["NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "gloo on CPU"]
        assert summary["logs"] == os.path.dirname(log)
        assert len(notes) == 3 and all("rerunning that size" in n for n in notes)
        assert report_exit(outcome.report) == 1
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


@pytest.mark.slow
def test_every_op_in_every_dtype_is_exact_across_real_ranks(monkeypatch):
    # One real 2-rank gloo job runs allreduce's own collectives for every op and dtype
    # (the CLI matrix would start twelve jobs for the same check).
    from gpudoctor.launch.supervisor import launch_function

    here = os.path.dirname(os.path.abspath(__file__))
    tag = new_tag()
    env = {"PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p), TAG_ENV: tag}
    monkeypatch.delenv("GPUDOCTOR_FAULT", raising=False)
    try:
        from launch_targets import WrongCounts

        result = launch_function("launch_targets:every_op_and_dtype", {"sizes": [4096, 100003]}, 2, timeout=120,
                                 env=env, result_type=WrongCounts)  # fmt: skip
        assert result.ok and len(result.results) == 2
        for rank_result in result.results:
            wrong = rank_result.wrong
            assert len(wrong) == 4 * 3 * 2
            assert all(n == 0 for n in wrong.values()), wrong
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
