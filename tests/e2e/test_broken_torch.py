"""A torch whose import raises (a missing libcudart, a stray `torch` folder on
PYTHONPATH) is a finding that explains it, exit 1, never a traceback: for every
command that needs torch."""

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def broken_torch(tmp_path):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('raise ImportError("libcudart.so.12: cannot open shared object file")\n')
    return dict(os.environ, PYTHONPATH=str(tmp_path))


@pytest.mark.parametrize("command", [["check"], ["allreduce", "--sizes", "4K"], ["train-smoke"]])
def test_broken_torch_is_a_finding_not_a_traceback(broken_torch, command):
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *command, "--json"],
        env=broken_torch, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    report = json.loads(r.stdout)
    failed = [f for f in report["findings"] if f["severity"] == "error"]
    assert failed[0]["id"] == "torch-import-failed"
    assert "libcudart.so.12" in failed[0]["title"] and failed[0]["fix"]


def test_run_with_ranks_reports_the_broken_torch_before_starting_any(broken_torch, tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", str(script)],
        env=broken_torch, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and "torch-import-failed" in r.stderr
    assert "hello" not in r.stdout
