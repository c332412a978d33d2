"""The findings model and its three renderers."""

import json

from rich.console import Console

from gpudoctor.core.exit_code import ExitCode, report_exit, script_exit
from gpudoctor.core.findings import Finding, Report, Severity, ok
from gpudoctor.render.console import print_report
from gpudoctor.render.json_out import report_json
from gpudoctor.render.markdown import report_markdown


def sample(*severities):
    findings = [
        Finding(
            id=f"thing-{i}",
            severity=s,
            title=f"title {i}",
            evidence={"CUDA_VISIBLE_DEVICES": "1,0", "count": i},
            why="because",
            fix="export X=1",
            area="area-a" if i % 2 else "area-b",
        )
        for i, s in enumerate(severities)
    ]
    return Report("check", tuple(findings), {"facts": {"n": 1}})


def test_exit_codes_follow_the_worst_severity_and_strict():
    assert report_exit(sample(Severity.OK, Severity.INFO)) == 0
    assert report_exit(sample(Severity.OK, Severity.WARN)) == 0
    assert report_exit(sample(Severity.OK, Severity.WARN), strict=True) == 1
    assert report_exit(sample(Severity.ERROR)) == 1
    assert report_exit(Report("x", ()), strict=True) == 0
    # Interruption is data on the report, not a finding id to look for.
    assert report_exit(Report("x", (), interrupted=True)) == ExitCode.INTERRUPTED == 130
    assert report_exit(Report("x", (Finding("launch-interrupted", Severity.ERROR, "t"),))) == 1


def test_exit_code_values_are_the_documented_ones():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 124, 129, 130, 143]
    assert script_exit(0, sample(Severity.WARN), strict=True) == 1
    assert script_exit(0, sample(Severity.WARN), strict=False) == 0
    assert script_exit(3, sample(Severity.OK), strict=True) == 3


def test_json_envelope_is_stable_and_round_trips():
    report = sample(Severity.OK, Severity.ERROR)
    data = json.loads(report_json(report))
    assert set(data) == {"gpudoctor", "schema_version", "command", "ok", "findings", "facts"}
    assert data["ok"] is False and data["command"] == "check"
    assert set(data["findings"][0]) == {"id", "severity", "title", "evidence", "why", "fix", "area"}
    back = [Finding.from_dict(d) for d in data["findings"]]
    assert tuple(back) == report.findings


def test_json_turns_non_finite_numbers_into_null():
    report = Report("allreduce", (), {"results": [{"busbw_gbps": float("nan")}]})
    assert json.loads(report_json(report))["results"][0]["busbw_gbps"] is None


def test_console_report_groups_by_area_and_shows_fix_only_for_problems():
    console = Console(record=True, width=200)
    print_report(console, sample(Severity.OK, Severity.WARN, Severity.ERROR))
    text = console.export_text()
    assert text.index("area-b") < text.index("area-a")
    assert "✓ title 0" in text and "! title 1" in text and "✗ title 2" in text
    assert text.count("fix: export X=1") == 2
    assert "problems found" in text.splitlines()[-1]


def test_markdown_lists_findings_and_details_of_problems():
    md = report_markdown(sample(Severity.OK, Severity.ERROR), sections=["### GPUs\n\nnone"])
    assert md.startswith("## gpudoctor check — problems found")
    assert "### GPUs" in md and "| ✅ | `thing-0` | title 0 |" in md
    assert "#### ❌ `thing-1`: title 1" in md and "```\nexport X=1\n```" in md


def test_ok_helper_builds_a_passed_finding():
    f = ok("torch-build", "torch 2.13 (CPU build)", "torch", version="2.13.0")
    assert f.severity is Severity.OK and f.evidence == {"version": "2.13.0"} and f.area == "torch"


def test_report_ok():
    healthy, broken = sample(Severity.OK, Severity.WARN), sample(Severity.OK, Severity.ERROR)
    assert healthy.ok is True and broken.ok is False
    assert broken.ok == broken.to_dict()["ok"] and broken.ok == (not broken.failed())
