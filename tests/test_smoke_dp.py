"""--compare-dp's DataParallel job. It needs 2+ GPUs to mean anything, but its
code path runs on CPU too (DataParallel without GPUs calls the module directly),
so a broken job is caught here and not first on a GPU machine."""

import pytest

from gpudoctor.launch.supervisor import launch_function
from gpudoctor.hang.failures import launch_findings
from gpudoctor.commands.train_smoke.config import SmokeConfig
from gpudoctor.commands.train_smoke.result import DataParallelRun
from gpudoctor.probe.cuda import CudaFacts
from gpudoctor.commands.train_smoke.job import compare_dp

pytestmark = pytest.mark.slow


def test_dataparallel_job_runs_as_one_supervised_rank_and_learns():
    cfg = SmokeConfig(nproc=2, device="cpu", steps=60)
    result = launch_function("gpudoctor.commands.train_smoke.dp:run_dp", cfg, 1, timeout=60, result_type=DataParallelRun)
    assert result.ok, launch_findings(result)
    dp = result.results[0]
    assert dp.gpus == 0 and dp.steps == 60 and dp.global_batch == 128
    assert dp.samples_per_s == pytest.approx(dp.steps_per_s * 128)
    assert dp.final_loss < 0.5  # from ~1.6: it trained


def test_compare_dp_explains_what_it_needs():
    tp = {"total": {"samples_per_s": 1000.0}}
    for cfg, facts in [
        (SmokeConfig(device="cpu"), CudaFacts(False, 0, False, None)),
        (SmokeConfig(device="cuda", nproc=2), CudaFacts(True, 1, True, "12.8")),
        (SmokeConfig(device="cuda", nproc=1), CudaFacts(True, 2, True, "12.8")),
    ]:
        findings, dp = compare_dp(cfg, facts, tp)
        assert dp is None
        assert [f.id for f in findings] == ["dp-comparison-needs-gpus"]
        assert findings[0].severity.value == "warn"
