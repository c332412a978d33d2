"""The engine around the rules: file discovery, decoding per PEP 263,
syntax errors, suppression comments, rule selection, output formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpudoctor.core.exit_code import report_exit
from gpudoctor.linter import engine
from gpudoctor.linter import formats
from gpudoctor.linter.rules import BY_ID, CHECKS
from gpudoctor.linter.source import decode, suppressions

DATAPARALLEL = b"import torch.nn as nn\nmodel = nn.DataParallel(net)\n"


def rules_of(diagnostics):
    return [(d.line, d.rule) for d in diagnostics]


def test_python_files_skips_hidden_venv_cache_and_site_packages(tmp_path):
    for rel in ["a.py", "pkg/b.py", "pkg/notes.txt", ".hidden/c.py", "__pycache__/d.py",
                "lib/site-packages/e.py", "env/f.py", "node_modules/g.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    found = [os.path.relpath(p, tmp_path) for p in engine.python_files([str(tmp_path)])]
    assert found == ["a.py", os.path.join("pkg", "b.py")]
    # a file named explicitly is linted whatever its place or extension
    assert engine.python_files([str(tmp_path / "pkg" / "notes.txt")]) == [str(tmp_path / "pkg" / "notes.txt")]


def test_missing_path_and_unknown_rule_raise():
    with pytest.raises(engine.MissingPath):
        engine.python_files(["/no/such/file.py"])
    with pytest.raises(engine.UnknownRule):
        engine.choose_rules(select=["no-such-rule"])
    with pytest.raises(engine.UnknownRule):
        engine.choose_rules(ignore=["no-such-rule"])


def test_choose_rules_keeps_file_problems_unless_ignored():
    chosen = {r.id for r in engine.choose_rules(select=["dataparallel"])}
    assert chosen == {"dataparallel", "syntax-error", "unreadable-file"}
    assert "syntax-error" not in {r.id for r in engine.choose_rules(ignore=["syntax-error"])}
    assert len(engine.choose_rules()) == len([r for r in BY_ID.values() if not r.opt_in])  # advice: when named


def test_syntax_error_is_a_diagnostic_with_its_line():
    (d,) = engine.lint_source(b"x = 1\ndef f(:\n    pass\n", "bad.py")
    assert (d.line, d.rule, d.path) == (2, "syntax-error", "bad.py")
    assert "not valid Python" in d.message


def test_nul_byte_is_a_syntax_error_not_a_crash():
    (d,) = engine.lint_source(b"x = 1\x00\n", "nul.py")
    assert d.rule == "syntax-error"


def test_pep263_cookie_decodes_latin1():
    data = "# -*- coding: latin-1 -*-\n# café\nimport torch.nn as nn\nnn.DataParallel(m)\n".encode("latin-1")
    assert decode(data).text.splitlines()[1] == "# café"
    assert rules_of(engine.lint_source(data, "l1.py")) == [(4, "dataparallel")]


def test_undecodable_and_unknown_codec_are_unreadable():
    (d,) = engine.lint_source(b"x = 1\ny = '\xff'\n", "bad.py")
    assert (d.line, d.rule) == (2, "unreadable-file")
    (d,) = engine.lint_source(b"# coding: klingon\nx = 1\n", "k.py")
    assert d.rule == "unreadable-file" and "klingon" in d.message


def test_utf8_bom_is_accepted():
    assert rules_of(engine.lint_source(b"\xef\xbb\xbf" + DATAPARALLEL, "bom.py")) == [(2, "dataparallel")]


def test_columns_count_characters_not_bytes():
    (d,) = engine.lint_source("import torch.nn as nn\né = nn.DataParallel(m)\n".encode(), "u.py")
    assert d.col == 5


@pytest.mark.parametrize(
    "comment,kept",
    [
        ("# gpudoctor: ignore[dataparallel]", False),
        ("# gpudoctor: ignore", False),
        ("# GPUDOCTOR: IGNORE[save-all-ranks, dataparallel]", False),
        ("# gpudoctor: ignore[save-all-ranks]", True),
        ("", True),
    ],
)
def test_suppression_comments(comment, kept):
    data = f"import torch.nn as nn\nmodel = nn.DataParallel(net)  {comment}\n".encode()
    assert bool(engine.lint_source(data, "s.py")) == kept


def test_suppression_text_inside_a_string_does_not_count():
    # the string stands on the flagged line but is not device_ids (a string there is device-ids-not-list)
    text = 'import torch.nn as nn\nm = nn.DataParallel(net); tag = "# gpudoctor: ignore"\n'
    assert suppressions(text) == {}
    assert [d.rule for d in engine.lint_source(text.encode(), "s.py")] == ["dataparallel"]


# linux forks its workers (forkserver beside other threads); Windows and macOS spawn them (simulated
# here: spawn runs on Linux too).
@pytest.mark.parametrize("platform", ["linux", "win32", "darwin"])
def test_lint_files_in_parallel_matches_serial(tmp_path, platform):
    paths = []
    for i in range(6):
        path = tmp_path / f"f{i}.py"
        path.write_bytes(DATAPARALLEL if i % 2 else b"x = 1\n")
        paths.append(str(path))
    serial = engine.lint_files(paths, CHECKS, jobs=1)
    parallel = engine.lint_files(paths, CHECKS, jobs=2, platform=platform)
    assert serial == parallel and len(serial.diagnostics) == 3 and serial.files == 6


def test_workers_fork_only_from_a_process_of_one_thread():
    # a forked worker inherits every lock another thread held at the fork
    assert engine.start_method("linux", threads=1) == "fork"
    assert engine.start_method("linux", threads=3) == "forkserver"
    assert engine.start_method("win32", threads=1) == engine.start_method("darwin", threads=1) == "spawn"


def result(*diagnostics):
    return engine.LintResult(tuple(diagnostics), files=3)


D = engine.Diagnostic("dir/a b.py", 2, 9, "dataparallel", "msg, with: colon", "fix it")


def test_text_format_is_ruff_style_with_fix_and_summary():
    out = formats.text(result(D)).splitlines()
    assert out == ["dir/a b.py:2:9: dataparallel error: msg, with: colon", "    fix: fix it",
                   "Found 1 diagnostic (1 error, 0 warnings) in 1 file (3 checked)."]
    assert formats.text(result()) == "No diagnostics: 3 files checked."


def test_github_annotations_escape_properties_and_data():
    (line,) = formats.github(result(D)).splitlines()
    assert line == "::error file=dir/a b.py,line=2,col=9,title=dataparallel::msg, with: colon%0Afix: fix it"


def test_sarif_2_1_0_shape():
    doc = json.loads(formats.sarif(result(D)))
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == set(BY_ID)
    (res,) = run["results"]
    assert rules[res["ruleIndex"]]["id"] == "dataparallel" == res["ruleId"]
    location = res["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "dir/a%20b.py"
    assert location["region"] == {"startLine": 2, "startColumn": 9}


def test_json_report_maps_each_diagnostic_to_a_finding():
    report = formats.report(result(D))
    data = report.to_dict()
    assert data["command"] == "lint" and data["ok"] is False and report_exit(report) == 1
    assert data["diagnostics"] == [D.to_dict()]
    (finding,) = data["findings"]
    assert finding["id"] == "dataparallel" and finding["area"] == "lint"
    assert finding["evidence"] == {"path": "dir/a b.py", "line": 2, "col": 9}
    assert finding["fix"] == "fix it" and finding["why"]
    assert formats.report(result()).to_dict()["ok"] is True


NOTEBOOK = {
    "nbformat": 4,
    "cells": [
        {"cell_type": "markdown", "source": ["# DDP in a notebook"]},
        {"cell_type": "code", "source": ["!pip install torch\n", "%matplotlib inline\n", "import torch.distributed as dist\n"]},
        {"cell_type": "code", "source": "%%time\nthis is not python"},
        {"cell_type": "code", "source": ["if dist.get_rank() == 0:\n", "    dist.barrier()\n"]},
    ],
}


def test_notebook_code_cells_are_linted_with_cell_and_line(tmp_path):
    nb = tmp_path / "train.ipynb"
    nb.write_text(json.dumps(NOTEBOOK))
    (tmp_path / "broken.ipynb").write_text("{not json")
    result = engine.lint_paths([str(tmp_path)])
    by_rule = {d.rule: d for d in result.diagnostics}
    d = by_rule["collective-under-rank-condition"]
    assert (d.path, d.cell, d.line, d.col, d.severity) == (str(nb), 3, 2, 5, "error")
    assert "cell 3 line 1" in d.message and f"\n{nb}:cell 3:2:5: collective-under-rank-condition error:" in formats.text(result)
    assert by_rule["unreadable-file"].path.endswith("broken.ipynb") and result.files == 2


def test_test_files_skip_rules_that_do_not_fit_tests(tmp_path):
    code = "import torch.nn as nn\nmodel = nn.DataParallel(net)\n"
    for name in ("test_model.py", "model_test.py", "conftest.py", "train.py"):
        (tmp_path / name).write_text(code)
    found = {os.path.basename(d.path) for d in engine.lint_paths([str(tmp_path)]).diagnostics}
    assert found == {"train.py"}


def test_severity_decides_failure():
    warn = engine.Diagnostic("a.py", 1, 1, "dataparallel", "m", "f", "warning")
    err = engine.Diagnostic("a.py", 2, 1, "collective-under-rank-condition", "m", "f", "error")
    assert not result(warn).failed() and result(warn).failed("warning") and not result(err).failed("never")
    assert result(warn, err).failed() and result(warn, err).errors == 1


def test_pyproject_section(tmp_path):
    from gpudoctor.linter import config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.gpudoctor.lint]\nignore = ["dataparallel"]\nexclude = ["vendor/*"]\nfail-on = "warning"\n'
    )
    (tmp_path / "sub").mkdir()
    found = config.find(str(tmp_path / "sub"))
    assert (found.ignore, found.fail_on) == (("dataparallel",), "warning")
    assert found.excluded(str(tmp_path / "vendor" / "x.py")) and not found.excluded(str(tmp_path / "x.py"))
    (tmp_path / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nfail-on = "sometimes"\n')
    with pytest.raises(config.ConfigError, match="fail-on must be one of"):
        config.find(str(tmp_path))
    assert config.find("/") == config.LintConfig()


WORKERS_UNDER_A_DEFERRING_SIGTERM = """
import signal, sys
from gpudoctor.linter import engine
from gpudoctor.linter.rules import CHECKS
signal.signal(signal.SIGTERM, lambda signum, frame: None)  # a service's handler that defers SIGTERM
paths = sys.argv[1:]
result = engine.lint_files(paths, CHECKS, jobs=2, platform="linux")
print(len(result.diagnostics), result.files)
"""


def test_a_callers_sigterm_handler_does_not_keep_the_pool_waiting(tmp_path):
    # CI, twice: a pool forked by a process whose SIGTERM handler did not exit waited 300 s in
    # terminate() for workers that inherited it; each worker takes SIGTERM's default back
    paths = []
    for i in range(4):
        path = tmp_path / f"f{i}.py"
        path.write_bytes(DATAPARALLEL if i % 2 else b"x = 1\n")
        paths.append(str(path))
    out = subprocess.run([sys.executable, "-c", WORKERS_UNDER_A_DEFERRING_SIGTERM, *paths],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0 and out.stdout.split() == ["2", "4"], out.stderr[-2000:]
