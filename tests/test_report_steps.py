"""`gpudoctor report` (report/steps.py, report/document.py): steps that cannot stop each other, and the Markdown file."""

from __future__ import annotations

import datetime

from gpudoctor.core.exit_code import ExitCode, steps_exit
from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.commands.report.document import demote_headings, document
from gpudoctor.commands.report.steps import Step, StepResult, run_steps

NOW = datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.timezone.utc)
BAD = Finding("shm-too-small", Severity.WARN, "/dev/shm is only 64 MiB", {"size": "64 MiB"}, "why", "# a comment fix")


def healthy() -> Report:
    return Report("lint", (Finding("x-ok", Severity.OK, "fine"),))


def test_a_raising_step_is_a_result_and_the_next_steps_still_run():
    def broken() -> Report:
        raise RuntimeError("probe exploded")

    results = run_steps([Step("check", "gpudoctor check", broken), Step("lint", "gpudoctor lint", healthy)])
    assert [r.name for r in results] == ["check", "lint"]
    assert results[0].report is None and results[0].error == "RuntimeError: probe exploded"
    assert "probe exploded" in results[0].trace and results[1].ok


def test_ctrl_c_ends_the_step_and_skips_the_rest():
    def interrupted() -> Report:
        raise KeyboardInterrupt

    results = run_steps([Step("a", "a", healthy), Step("b", "b", interrupted), Step("c", "c", healthy)])
    assert [r.error for r in results] == ["", "interrupted (Ctrl-C)", "not run: interrupted before it started"]


def test_an_interrupted_launch_stops_the_report_too():
    def launch_stopped_by_ctrl_c() -> Report:  # what the launcher returns after Ctrl-C
        return Report("allreduce", (), interrupted=True)

    results = run_steps([Step("a", "a", launch_stopped_by_ctrl_c), Step("b", "b", healthy)])
    assert results[0].interrupted and results[1].error == "not run: interrupted before it started"
    assert steps_exit(results) == ExitCode.INTERRUPTED


def test_exit_code_of_the_steps():
    fine = StepResult("a", "a", 0.0, report=healthy())
    failed = StepResult("b", "b", 0.0, error="RuntimeError: x")
    assert steps_exit([fine]) == ExitCode.OK and steps_exit([fine, failed]) == ExitCode.PROBLEM


def test_document_has_a_summary_and_one_collapsible_section_per_step():
    results = [
        StepResult("check", "gpudoctor check", 1.0, report=Report("lint", (BAD,))),
        StepResult("allreduce", "gpudoctor allreduce --nproc 2", 2.0, error="ValueError: no", trace="Traceback ...\nValueError: no\n"),
        StepResult("train-smoke", "gpudoctor train-smoke --nproc 2", 3.0, report=healthy()),
    ]
    text = document(results, NOW)
    assert text.startswith("# gpudoctor report\n") and "2026-01-02 03:04 UTC" in text
    assert "| check | ✅ healthy (1 warning) | 1.0 s | `gpudoctor check` |" in text
    assert "| allreduce | ❌ did not finish | 2.0 s |" in text
    assert "Findings to look at: `shm-too-small`. Did not finish: allreduce." in text
    assert text.count("<details") == 3 and text.count("</details>") == 3
    # a step with something to look at opens by itself; a healthy one stays folded
    assert "<details open>\n<summary><b>check</b>" in text and "<details>\n<summary><b>train-smoke</b>" in text
    assert "**ValueError: no**" in text and "Run it alone to see more: `gpudoctor allreduce --nproc 2`" in text
    assert "### gpudoctor lint — healthy" in text  # the step's own heading, one level down


def test_demote_headings_leaves_code_alone():
    assert demote_headings("## a\ntext\n```\n# fix comment\n```\n### b") == "### a\ntext\n```\n# fix comment\n```\n#### b"


def test_skipped_steps_are_named_not_passed_off_as_healthy():
    """`report --skip allreduce,train-smoke`: the summary says what did not run."""
    fine = [StepResult("check", "gpudoctor check", 1.0, report=healthy())]
    text = document(fine, NOW, skipped=["allreduce", "train-smoke"])
    assert "Every step that ran is healthy; skipped: allreduce, train-smoke (--skip)." in text
    assert "Every step healthy." not in text
    assert document(fine, NOW).count("Every step healthy.") == 1
    warned = [StepResult("check", "gpudoctor check", 1.0, report=Report("lint", (BAD,)))]
    text = document(warned, NOW, skipped=["train-smoke"])
    assert "Findings to look at: `shm-too-small`. Skipped: train-smoke (--skip)." in text
