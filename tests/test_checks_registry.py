"""The registry runs every check; a check that raises becomes a finding."""

from __future__ import annotations

from facts_cases import by_id, cpu_facts, gpu2_facts, ids
from gpudoctor.checks import all_checks, run_checks
from gpudoctor.core.findings import Severity


def test_cpu_snapshot_findings_in_report_order():
    assert ids(run_checks(cpu_facts())) == [
        "torch-build",
        "no-nvidia-gpu",
        "backend-gloo",
        "backend-choice",
        "cpu-count",
        "ram-size",
        "shm-size",
        "open-files-limit",
        "container-detected",
        "distributed-env",
    ]


def test_no_error_or_warning_on_either_healthy_snapshot():
    for facts in (cpu_facts(), gpu2_facts()):
        worst = {f.severity for f in run_checks(facts)}
        assert worst <= {Severity.OK, Severity.INFO}, [(f.id, f.title) for f in run_checks(facts) if f.severity not in (Severity.OK, Severity.INFO)]


def test_a_check_that_raises_is_reported_and_the_rest_still_run():
    def check_broken(facts):
        raise KeyError("surprise")

    findings = run_checks(cpu_facts(), (check_broken, *all_checks()))
    f = by_id(findings, "check-failed")
    assert f.severity is Severity.ERROR and f.evidence["check"].endswith("check_broken")
    assert "torch-build" in ids(findings)
