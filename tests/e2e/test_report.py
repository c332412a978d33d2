"""`gpudoctor report` as users run it: the file is always written, a failing
step is a section saying so, bad options are usage errors before any step runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def report(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", "report", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_torch_that_does_not_import_fails_every_step_in_its_own_section(tmp_path):
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("libcudart.so.12: cannot open shared object file")\n')
    src = os.path.dirname(os.path.dirname(__import__("gpudoctor").__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow.parent), src]))
    out = tmp_path / "bug.md"
    r = report("-o", str(out), env=env)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stdout + r.stderr and r.stdout.startswith(f"Wrote {out}")
    text = out.read_text()
    for step in ("check", "allreduce", "train-smoke"):
        assert f"| {step} | ❌ problems found |" in text
    assert text.count("<details open>") == 3 and text.count("`torch-import-failed`") >= 3
    assert "libcudart.so.12" in text


@pytest.mark.slow
def test_check_and_a_short_allreduce_give_facts_figures_and_findings(tmp_path):
    out = tmp_path / "report.md"
    r = report("-o", str(out), "--skip", "train-smoke")
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    assert "| check | ✅ healthy" in text and "| allreduce | ✅ healthy" in text and "| train-smoke |" not in text
    assert "#### Versions" in text and "| torch | 2." in text  # check's facts
    assert "#### Results" in text and "busbw GB/s" in text  # allreduce's figures
    assert "`allreduce-correct`" in text
    assert "skipped: train-smoke (--skip)" in text and r.stdout.rstrip().endswith("; skipped: train-smoke")


def test_skip_leaves_the_steps_out_and_the_file_says_so(tmp_path):
    out = tmp_path / "report.md"
    r = report("-o", str(out), "--skip", "allreduce", "--skip", "train-smoke")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    text = out.read_text()
    assert "| check |" in text and "| allreduce |" not in text and "| train-smoke |" not in text
    assert "Every step healthy." not in text
    assert "kipped: allreduce, train-smoke (--skip)." in text  # "Every step that ran is healthy; skipped: ..." or "... Skipped: ..."
    assert "gpudoctor report: allreduce" not in r.stderr


@pytest.mark.parametrize(
    "args, words",
    [(["--skip", "check"], "--skip check: choose from"), (["-o", "/no/such/dir/r.md"], "does not exist")],
)
def test_bad_options_fail_before_any_step(tmp_path, args, words):
    r = report(*args)
    assert r.returncode == 2 and words in r.stderr and "gpudoctor report: check" not in r.stderr
