"""`gpudoctor lint` as users run it: a real subprocess on real files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
BROKEN = FIXTURES / "trainer_class_broken.py"
CLEAN = FIXTURES / "torchrun_correct.py"
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<rule>[a-z0-9-]+) (?P<message>.+)$")


def gpudoctor(*args: str, cwd: Path = ROOT, python_flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *python_flags, "-m", "gpudoctor", "lint", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )


def assert_usage_error(proc: subprocess.CompletedProcess, words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("gpudoctor: error:") and words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_text_output_exit_1_with_fix_lines_and_summary():
    proc = gpudoctor(str(BROKEN.relative_to(ROOT)), "--fail-on", "warning")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    diagnostics = [LINE.match(line) for line in lines[:-1:2]]
    assert all(diagnostics), lines
    assert all(line.startswith("    fix: ") for line in lines[1:-1:2])
    assert {m["rule"] for m in diagnostics} >= {"sampler-no-set-epoch", "save-all-ranks", "tensor-to-unassigned"}
    assert {m["path"] for m in diagnostics} == {"tests/fixtures/lint/trainer_class_broken.py"}
    errors = sum(m["message"].startswith("error: ") for m in diagnostics)
    assert lines[-1] == (f"Found {len(diagnostics)} diagnostics ({errors} error, {len(diagnostics) - errors} "
                         "warnings) in 1 file (1 checked).")
    # an error fails the run by default; --exit-zero never fails it
    assert gpudoctor(str(BROKEN.relative_to(ROOT))).returncode == 1
    assert gpudoctor(str(BROKEN.relative_to(ROOT)), "--exit-zero").returncode == 0


def test_clean_script_exit_0():
    proc = gpudoctor(str(CLEAN))
    assert (proc.returncode, proc.stdout) == (0, "No diagnostics: 1 file checked.\n")


def test_json_envelope_and_diagnostics():
    proc = gpudoctor(str(BROKEN), "--format", "json", "--fail-on", "warning")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["command"] == "lint" and doc["ok"] is False and doc["gpudoctor"]
    assert doc["diagnostics"] and set(doc["diagnostics"][0]) == {"path", "line", "col", "rule", "severity", "message", "fix"}
    assert [(f["id"], f["evidence"]["line"]) for f in doc["findings"]] == [
        (d["rule"], d["line"]) for d in doc["diagnostics"]
    ]
    assert all(f["area"] == "lint" and f["severity"] in ("warn", "error") for f in doc["findings"])
    assert [f["severity"] == "error" for f in doc["findings"]] == [d["severity"] == "error" for d in doc["diagnostics"]]
    # --json is the shared spelling of the same thing
    assert json.loads(gpudoctor(str(BROKEN), "--json", "--fail-on", "warning").stdout) == doc


def test_json_clean_is_ok():
    proc = gpudoctor(str(CLEAN), "--format", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["ok"] is True and doc["diagnostics"] == [] and doc["findings"] == []


def test_sarif_and_github_formats():
    sarif = gpudoctor(str(BROKEN), "--format", "sarif", "--fail-on", "warning")
    assert sarif.returncode == 1
    doc = json.loads(sarif.stdout)
    assert doc["version"] == "2.1.0" and doc["runs"][0]["results"]
    github = gpudoctor(str(BROKEN), "--format", "github", "--fail-on", "warning")
    assert github.returncode == 1
    lines = github.stdout.splitlines()
    assert lines and all(re.match(r"^::(?:error|warning) file=[^,]+,line=\d+,col=\d+,title=[a-z0-9-]+::", line) for line in lines)
    assert len(lines) == len(doc["runs"][0]["results"])


def test_select_and_ignore_take_comma_separated_ids():
    selected = json.loads(gpudoctor(str(BROKEN), "--select", "save-all-ranks,tensor-to-unassigned", "--json").stdout)
    assert {d["rule"] for d in selected["diagnostics"]} == {"save-all-ranks", "tensor-to-unassigned"}
    everything = json.loads(gpudoctor(str(BROKEN), "--json").stdout)["diagnostics"]
    ignored = json.loads(gpudoctor(str(BROKEN), "--ignore", "save-all-ranks", "--ignore", "nccl-no-set-device",
                                   "--json").stdout)["diagnostics"]
    assert ignored == [d for d in everything if d["rule"] not in ("save-all-ranks", "nccl-no-set-device")]


def test_suppression_comment(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch.nn as nn\nmodel = nn.DataParallel(net)  # gpudoctor: ignore[dataparallel]\n")
    assert gpudoctor(str(script)).returncode == 0
    script.write_text("import torch.nn as nn\nmodel = nn.DataParallel(net)  # gpudoctor: ignore[save-all-ranks]\n")
    assert gpudoctor(str(script), "--fail-on", "warning").returncode == 1


@pytest.mark.parametrize(
    "args,words",
    [
        (["--select", "no-such-rule", "x.py"], "unknown rule id 'no-such-rule'"),
        (["--ignore", "dataparallel,bogus", "x.py"], "unknown rule id 'bogus'"),
        (["--explain", "bogus"], "unknown rule id 'bogus'"),
        (["does/not/exist.py"], "no such file or directory: does/not/exist.py"),
        (["--format", "xml", "x.py"], "unknown format 'xml'"),
        ([], "give at least one PATH"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, words):
    (tmp_path / "x.py").write_text("x = 1\n")
    assert_usage_error(gpudoctor(*args, cwd=tmp_path), words)


def test_explain_prints_the_rule_page():
    proc = gpudoctor("--explain", "save-all-ranks")
    assert proc.returncode == 0
    assert proc.stdout == (ROOT / "docs" / "rules" / "save-all-ranks.md").read_text(encoding="utf-8")


def test_bad_files_are_diagnostics_and_linting_goes_on(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "latin1.py").write_bytes(
        "# -*- coding: latin-1 -*-\n# Grüße\nimport torch.nn as nn\nnn.DataParallel(m)\n".encode("latin-1")
    )
    (tmp_path / "binary.py").write_bytes(b"x = '\xff\xfe'\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "hidden.py").write_text("def f(:\n")
    proc = gpudoctor(".", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["files_checked"] == 3
    assert sorted((d["path"], d["line"], d["rule"]) for d in doc["diagnostics"]) == [
        ("./binary.py", 1, "unreadable-file"),
        ("./broken.py", 1, "syntax-error"),
        ("./latin1.py", 4, "dataparallel"),
    ]


def test_lint_never_imports_torch(tmp_path):
    proc = gpudoctor(str(BROKEN), python_flags=("-X", "importtime"))
    assert proc.returncode == 1
    modules = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "gpudoctor.linter.engine" in modules
    assert not [m for m in modules if m == "torch" or m.startswith("torch.")]


def test_a_folder_is_one_project():
    # utils.setup() calls init_process_group("nccl"); the script that imports it binds the GPU
    app = ROOT / "tests" / "fixtures" / "lint_project" / "fsdp_app"
    assert gpudoctor(str(app / "utils" / "train_utils.py"), "--select", "nccl-no-set-device",
                     "--fail-on", "warning").returncode == 1
    proc = gpudoctor(str(app))
    assert (proc.returncode, proc.stdout.splitlines()[-1]) == (0, "No diagnostics: 3 files checked.")
    # a collective reached through another module's function, under a rank test
    proc = gpudoctor(str(app.parent / "metrics_app"), "--select", "collective-under-rank-condition")
    assert proc.returncode == 1, proc.stderr
    assert "reduce_dict() reaches dist.all_reduce() at dist_utils.py:10" in proc.stdout


def test_explain_new_rules():
    for rule in ("collective-under-rank-condition", "ddp-forward-on-one-rank"):
        proc = gpudoctor("--explain", rule)
        assert proc.returncode == 0 and proc.stdout.startswith(f"# {rule}\n") and "## Not flagged" in proc.stdout


def test_a_folder_without_python_files_warns_on_stderr(tmp_path):
    (tmp_path / "notes.txt").write_text("not python\n")
    proc = gpudoctor(str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files_checked"] == 0  # stdout stays one JSON object
    assert "no Python files under" in proc.stderr and "Traceback" not in proc.stderr


def test_pyproject_section_notebooks_and_fail_levels(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nignore = ["dataparallel"]\nexclude = ["vendor/*"]\n')
    nb = {"nbformat": 4, "cells": [{"cell_type": "code", "source": [
        "import torch.distributed as dist\n", "if dist.get_rank() == 0:\n", "    dist.barrier()\n"]}]}
    (tmp_path / "train.ipynb").write_text(json.dumps(nb))
    (tmp_path / "warn.py").write_text(
        "import torch\nimport torch.nn as nn\nmodel = nn.DataParallel(net)\nx = torch.zeros(3)\nx.to('cuda')\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "old.py").write_text("def f(:\n")
    proc = gpudoctor(".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "train.ipynb:cell 1:3:5: collective-under-rank-condition error:" in proc.stdout
    assert "dataparallel" not in proc.stdout and "vendor" not in proc.stdout
    assert "warn.py:5:1: tensor-to-unassigned warning:" in proc.stdout
    assert gpudoctor(".", "--exit-zero", cwd=tmp_path).returncode == 0
    assert gpudoctor("warn.py", cwd=tmp_path).returncode == 0  # warnings alone pass
    assert gpudoctor("warn.py", "--fail-on", "warning", cwd=tmp_path).returncode == 1
    assert "dataparallel" in gpudoctor("warn.py", "--no-config", cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nselect = ["no-such-rule"]\n')
    assert_usage_error(gpudoctor(".", cwd=tmp_path), "unknown rule id 'no-such-rule' in")


def test_explain_all_lists_the_rules_with_their_severity():
    proc = gpudoctor("--explain", "all")
    assert proc.returncode == 0
    assert re.search(r"^collective-under-rank-condition +error ", proc.stdout, re.M)
    assert re.search(r"^dataparallel +warning ", proc.stdout, re.M)


@pytest.mark.parametrize("args", [("--explain",), ("--explain", "--no-config"), ("--no-config", "--explain")])
def test_a_bare_explain_lists_the_rules_as_explain_all_does(args):
    listed = gpudoctor(*args)
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    assert listed.stdout == gpudoctor("--explain", "all").stdout
    assert "dataparallel" in listed.stdout and "collective-under-rank-condition" in listed.stdout
