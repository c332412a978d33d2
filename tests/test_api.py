"""The Python API (docs/api.md): the same Report the CLI renders, a cheap
`import gpudoctor`, and the Report showing itself in Jupyter as `--markdown` does."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gpudoctor
from gpudoctor.core.findings import Report

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "fixtures" / "facts_2gpu.json"
BROKEN = ROOT / "examples" / "train_broken.py"
FIXED = ROOT / "examples" / "train_fixed.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, timeout=120)


def test_import_is_cheap():
    code = "import sys, gpudoctor; print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'rich', 'typer', 'numpy', 'typing'}))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_check_of_a_snapshot_is_the_cli_report():
    report = gpudoctor.check(facts=SNAPSHOT)
    assert isinstance(report, Report) and report.ok is True
    assert report.to_dict() == json.loads(cli("check", "--facts", str(SNAPSHOT), "--json").stdout)
    # In Jupyter: the same Markdown as `--markdown`, the facts tables included.
    assert report._repr_markdown_() == cli("check", "--facts", str(SNAPSHOT), "--markdown").stdout
    first = report.findings[0]
    assert (first.id, first.severity.value) == ("torch-build", "ok") and first.evidence


def test_check_probes_this_machine():
    report = gpudoctor.check()
    assert report.command == "check" and report.data["facts"]["torch"]["status"] == "ok"
    assert {f.id for f in report.findings} >= {"torch-build", "backend-gloo"}


def test_check_rejects_visible_with_a_snapshot():
    with pytest.raises(ValueError, match="visible"):
        gpudoctor.check(visible="0", facts=SNAPSHOT)


def test_lint_is_the_cli_report_and_the_package_stays_callable():
    report = gpudoctor.lint(BROKEN)
    # its pitfalls are warnings (risks), not errors (certain hangs/crashes): ok, as the CLI exits 0
    assert report.ok is True and {f.id for f in report.findings} >= {"deprecated-launch", "save-all-ranks"}
    assert all(f.why and f.fix and f.severity.value == "warn" for f in report.findings)
    expected = json.loads(cli("lint", str(BROKEN), "--json").stdout)
    assert gpudoctor.lint([str(BROKEN)]).to_dict() == expected
    # No package shares a name with an API function: importing the linter leaves gpudoctor.lint the function.
    engine = importlib.import_module("gpudoctor.linter.engine")
    assert gpudoctor.lint([FIXED], select=["dataparallel"]).ok is True
    assert inspect.isfunction(gpudoctor.lint) and engine.lint_paths([str(FIXED)]).ok


def test_lint_bad_input_raises():
    with pytest.raises(FileNotFoundError):
        gpudoctor.lint("no/such/file.py")
    with pytest.raises(ValueError, match="no-such-rule"):
        gpudoctor.lint(FIXED, select=["no-such-rule"])


def test_a_plain_report_shows_its_findings_in_a_notebook():
    from gpudoctor.api import NotebookReport, markdown
    from gpudoctor.core.findings import Finding, Severity
    from gpudoctor.render.markdown import report_markdown

    plain = Report("demo", (Finding("thing", Severity.ERROR, "title", {"k": 1}, "why", "export X=1"),))
    assert markdown(plain) == report_markdown(plain)  # a command without sections of its own
    shown = NotebookReport(plain.command, plain.findings)._repr_markdown_()
    assert "`thing`" in shown and "export X=1" in shown


def test_public_names():
    assert set(gpudoctor.__all__) >= {"check", "lint", "Report", "Finding", "Severity"}
    for name in gpudoctor.__all__:
        assert getattr(gpudoctor, name) is not None
    with pytest.raises(AttributeError):
        gpudoctor.no_such_name  # noqa: B018


@pytest.mark.slow
def test_allreduce_runs_real_ranks_and_the_package_stays_callable():
    report = gpudoctor.allreduce(nproc=2, sizes="4K,64K", iters=2, warmup=1, timeout=120)
    assert report.ok is True and report.command == "allreduce"
    assert [row["bytes"] for row in report.data["results"]] == [4096, 65536]
    assert all(row["wrong"] == 0 for row in report.data["results"])
    assert "### Results" in report._repr_markdown_() and "busbw GB/s" in report._repr_markdown_()
    importlib.import_module("gpudoctor.commands.allreduce.job")
    assert inspect.isfunction(gpudoctor.allreduce)


@pytest.mark.slow
def test_train_smoke_verifies_a_real_ddp_job():
    # A small global batch (8: with lr 0.05 this diverged to NaN) and the default steps, which
    # grow to 320 for it: this job is also the one that shows it learning in them (it was a
    # second job of its own, by the CLI door, in tests/e2e/test_bad_inputs.py; --batch-size
    # reaching the steps' rule from the CLI: test_train_smoke_small_global_batch_needs_more_steps).
    report = gpudoctor.train_smoke(nproc=2, batch_size=4, timeout=240)
    assert report.ok is True, [(f.id, f.title) for f in report.findings if f.severity.value == "error"]
    assert {"smoke-sharding", "smoke-sync", "smoke-checkpoint"} <= {f.id for f in report.findings}
    learning = next(f for f in report.findings if f.id in ("smoke-learning", "loss-not-falling"))
    assert learning.id == "smoke-learning" and "in 320 steps" in learning.title, learning.title
    assert "### Throughput" in report._repr_markdown_()


def test_bad_arguments_raise_before_any_rank_starts():
    with pytest.raises(ValueError, match="lots"):
        gpudoctor.allreduce(sizes="lots")
    with pytest.raises(ValueError):
        gpudoctor.train_smoke(backend="carrier-pigeon")


LOG = ROOT / "tests" / "fixtures" / "logs" / "cuda_fork.log"


def test_diagnose_text_and_path_give_the_cli_findings():
    expected = json.loads(cli("diagnose", str(LOG), "--json").stdout)
    by_path = gpudoctor.diagnose(path=LOG)
    assert by_path.to_dict() == expected and by_path.ok is False
    by_text = gpudoctor.diagnose(LOG.read_text(encoding="utf-8", errors="replace"))
    assert by_text.to_dict()["findings"] == expected["findings"]
    assert by_text.data["root_cause"] == expected["root_cause"] and by_text.data["input"] == "<text>"
    assert by_text._repr_markdown_().startswith("## gpudoctor diagnose")
    importlib.import_module("gpudoctor.commands.diagnose.analyse")
    assert inspect.isfunction(gpudoctor.diagnose)


def test_diagnose_bad_input_raises():
    with pytest.raises(ValueError, match="give a log FILE"):  # the CLI's words (tests/test_doors.py)
        gpudoctor.diagnose()
    with pytest.raises(FileNotFoundError):
        gpudoctor.diagnose(path="no/such.log")
