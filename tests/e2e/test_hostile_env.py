"""GPUDOCTOR_* variables inherited from the environment (issue 39 medium 6, issue 34
item 8): those gpudoctor sets for its own processes do not act in a plain `run`, and
GPUDOCTOR_FAULT fakes no verdict: only the hidden `--fault` flag injects a fault,
and the report says so first."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDOCTOR_") and k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    return {**env, **extra}


def test_a_plain_run_ignores_the_run_variables_it_did_not_set(tmp_path):
    script = tmp_path / "sleepy.py"
    script.write_text("import time\ntime.sleep(1.5)\nprint('done')\n")
    stray = tmp_path / "stray.json"
    env = _env(GPUDOCTOR_RUN_JSON=str(stray), GPUDOCTOR_RUN_TIMEOUT="0.5", GPUDOCTOR_RUN_SUPERVISED="1", GPUDOCTOR_RUN_DIR=str(tmp_path))
    r = subprocess.run([*GPUDOCTOR, "run", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0 and r.stdout == "done\n", r.stderr  # not stopped at 0.5 s
    assert not stray.exists()
    assert "ignored GPUDOCTOR_RUN_JSON, GPUDOCTOR_RUN_TIMEOUT, GPUDOCTOR_RUN_SUPERVISED, GPUDOCTOR_RUN_DIR" in r.stderr


def test_a_fault_variable_fakes_no_verdict_and_the_flag_is_said_first():
    args = ["allreduce", "--sizes", "4K", "--iters", "2", "--warmup", "1", "--json"]
    r = subprocess.run([*GPUDOCTOR, *args], capture_output=True, text=True, timeout=120, env=_env(GPUDOCTOR_FAULT="1:wrong"))
    report = json.loads(r.stdout)
    assert r.returncode == 0 and report["findings"][0]["id"] == "fault-injected", r.stderr[-2000:]
    assert "ignored" in report["findings"][0]["title"] and not [f for f in report["findings"] if f["severity"] == "error"]
    # The flag that does inject it, said first, and its verdict (exit 1, allreduce-wrong-result
    # the one error): the 1:wrong case of
    # tests/e2e/test_allreduce.py::test_each_fault_names_the_rank_in_bounded_time_without_orphans,
    # whose job is that one (this was a second).


def test_lint_emptied_by_a_parent_folders_exclude_names_the_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nexclude = ["*"]\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("import torch\n")
    r = subprocess.run([*GPUDOCTOR, "lint", "."], capture_output=True, text=True, timeout=60, env=_env(), cwd=tmp_path / "sub")
    assert "no Python files under ." in r.stderr and str(tmp_path / "pyproject.toml") in r.stderr, r.stderr
