"""A run the --timeout watchdog stopped while it was still moving (timeout-still-progressing)
is a warning, not a hang, but never a healthy run: "ok" false, exit 124 as timeout(1), and
its last line says it ran out of time."""

from gpudoctor.core.exit_code import ExitCode, report_exit
from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.render.console import verdict


def _report(*findings: Finding) -> Report:
    return Report("train-smoke", findings)


OUT_OF_TIME = Finding("timeout-still-progressing", Severity.WARN, "ran out of time after 40 steps, still progressing")
A_WARNING = Finding("ddp-vs-dp", Severity.WARN, "DataParallel was faster")


def test_a_run_that_ran_out_of_time_is_not_healthy_and_exits_124():
    report = _report(OUT_OF_TIME)
    assert report.to_dict()["ok"] is False and report.failed()
    assert report_exit(report) == ExitCode.TIMEOUT == 124
    assert verdict(report).plain.startswith("! train-smoke: ran out of time, not finished")


def test_control_a_finished_run_with_a_warning_stays_healthy():
    report = _report(A_WARNING)
    assert report.to_dict()["ok"] is True and report_exit(report) == ExitCode.OK
    assert verdict(report).plain.startswith("! train-smoke: healthy, with warnings")


def test_sibling_a_hang_is_still_an_error_with_its_own_words():
    hung = Finding("rank-hung", Severity.ERROR, "rank 1 was stuck after 'joined'")
    report = _report(hung)
    assert report_exit(report) == ExitCode.TIMEOUT
    assert verdict(report).plain.startswith("✗ train-smoke: problems found")
