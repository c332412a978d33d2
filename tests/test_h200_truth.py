"""What one real H200 answered (tests/fixtures/gpu_truth/h200/: `bash ../shared/gpu/gpu_truth.sh` on a
lent machine, 2026-11-28, recorded unedited; README there), replayed on the CPU machine: the checks on
its recorded facts, and diagnose on the GPU tools' own output from that machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.api import diagnose
from gpudoctor.checks import check_report, run_checks
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity
from gpudoctor.probe.facts import load

TRUTH = Path(__file__).parent / "fixtures" / "gpu_truth" / "h200"
FACTS = Path(__file__).parent / "fixtures" / "facts_h200.json"


def test_the_recorded_h200_is_healthy_with_every_gpu_check_passed():
    findings = run_checks(load(FACTS))
    assert [f.id for f in findings if f.severity in (Severity.ERROR, Severity.WARN)] == []
    passed = {f.id for f in findings if f.severity is Severity.OK}
    assert {"arch-supported", "driver-cuda-version", "gpu-health-ok", "backend-nccl", "device-count"} <= passed
    assert report_exit(check_report(load(FACTS))) == 0


def test_an_image_label_is_no_launcher_variable():
    # the container set NCCL_VERSION=2.28.3-1 (NVIDIA's images do); NCCL never reads it
    findings = run_checks(load(FACTS))
    env = next(f for f in findings if f.id == "distributed-env")
    assert env.severity is Severity.OK and "NCCL_VERSION" not in env.evidence


@pytest.mark.parametrize("name", ["smi.txt", "smi-q.txt", "smi-q_-x.txt", "smitopo_-m.txt"])
def test_a_healthy_gpus_own_tool_output_is_not_called_healthy_or_failed(name):
    """nvidia-smi of an idle, healthy H200: no fault shown, and nothing about the job: undecided (exit 1)."""
    report = diagnose(path=TRUTH / name)
    assert [f.id for f in report.findings if f.severity is Severity.ERROR] == []
    assert report.findings[0].id == "log-inconclusive" and report_exit(report) == 1
