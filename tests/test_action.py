"""action.yml, the composite GitHub Action: its shell steps run here for real in bash,
with the `${{ }}` expressions filled in as the runner would, against a workspace
holding a broken and a fixed script. The `uses:` steps (setup-python, upload-sarif)
are GitHub's own and only checked for what they are given."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = {step.get("id"): step for step in ACTION["runs"]["steps"]}
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


class Runner:
    """Just enough of a composite-action runner: inputs, github.action_path,
    runner.temp, and steps.<id>.outputs read back from $GITHUB_OUTPUT."""

    def __init__(self, tmp: Path, action_path: Path = ROOT, **inputs: str):
        self.tmp = tmp
        self.action_path = action_path
        self.inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        self.inputs.update({k.replace("_", "-"): v for k, v in inputs.items()})
        self.outputs: dict[str, dict[str, str]] = {}
        bin_dir = tmp / "bin"  # stands in for the install step's virtualenv
        bin_dir.mkdir(exist_ok=True)
        shim = bin_dir / "gpudoctor"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpudoctor "$@"\n')
        shim.chmod(0o755)
        self.path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"

    def value(self, expression: str) -> str:
        scope, _, rest = expression.partition(".")
        if scope == "inputs":
            return self.inputs[rest]
        if expression == "github.action_path":
            return str(self.action_path)
        if expression == "runner.temp":
            return str(self.tmp)
        if scope == "steps":
            step, _, output = rest.partition(".outputs.")
            return self.outputs.get(step, {}).get(output, "")
        raise AssertionError(f"action.yml uses an expression this test does not know: {expression}")

    def fill(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(text))

    def run(self, step_id: str, workspace: Path) -> subprocess.CompletedProcess:
        step = STEPS[step_id]
        output_file = self.tmp / f"output-{step_id}"
        output_file.write_text("")
        env = dict(os.environ, PATH=self.path, GITHUB_OUTPUT=str(output_file), GITHUB_PATH=str(self.tmp / "path"))
        env.update({name: self.fill(value) for name, value in step.get("env", {}).items()})
        r = subprocess.run(
            [step["shell"], "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True, text=True, timeout=60
        )
        self.outputs[step_id] = dict(line.split("=", 1) for line in output_file.read_text().splitlines())
        added = self.tmp / "path"  # $GITHUB_PATH: later steps find these first, as on a runner
        if added.exists():
            self.path = os.pathsep.join([*reversed(added.read_text().split()), self.path])
            added.unlink()
        return r


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "workspace"
    (ws / "train").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "train_broken.py", ws / "train" / "broken.py")
    shutil.copy(ROOT / "examples" / "train_fixed.py", ws / "train" / "fixed.py")
    return ws


def test_findings_become_annotations_sarif_and_a_failed_step(tmp_path, workspace):
    runner = Runner(tmp_path, paths="train", fail_on="warning")
    lint = runner.run("lint", workspace)
    assert lint.returncode == 0, lint.stderr
    assert runner.outputs["lint"]["exit-code"] == "1"
    sarif = json.loads(Path(runner.outputs["lint"]["sarif-file"]).read_text())
    results = sarif["runs"][0]["results"]
    annotations = [line for line in lint.stdout.splitlines() if line.startswith("::warning ")]
    assert len(annotations) == len(results) == 7  # examples/train_broken.py's diagnostics
    assert all(line.startswith("::warning file=train/broken.py,") for line in annotations)
    # the upload step is handed the file the lint step wrote
    upload = next(s for s in ACTION["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert runner.fill(upload["with"]["sarif_file"]) == runner.outputs["lint"]["sarif-file"]
    assert upload["if"] == "${{ inputs.upload-sarif == 'true' }}"
    verdict = runner.run("verdict", workspace)
    assert verdict.returncode == 1 and "pitfalls" in verdict.stdout


def test_warnings_alone_do_not_fail_by_default(tmp_path, workspace):
    runner = Runner(tmp_path, paths="train")
    lint = runner.run("lint", workspace)
    assert runner.outputs["lint"]["exit-code"] == "0" and "::warning file=train/broken.py," in lint.stdout
    assert runner.run("verdict", workspace).returncode == 0


def test_fail_on_findings_false_reports_without_failing(tmp_path, workspace):
    runner = Runner(tmp_path, paths="train", fail_on="warning", fail_on_findings="false")
    runner.run("lint", workspace)
    assert runner.outputs["lint"]["exit-code"] == "1"
    assert runner.run("verdict", workspace).returncode == 0


def test_clean_paths_and_extra_args(tmp_path, workspace):
    runner = Runner(tmp_path, paths="train/fixed.py train/broken.py", args="--select dataparallel")
    lint = runner.run("lint", workspace)
    assert runner.outputs["lint"]["exit-code"] == "0" and "::error" not in lint.stdout
    assert runner.run("verdict", workspace).returncode == 0


def test_usage_error_fails_the_lint_step(tmp_path, workspace):
    lint = Runner(tmp_path, paths="no/such/dir").run("lint", workspace)
    assert lint.returncode == 2 and "no such file or directory" in lint.stderr


def test_third_party_actions_are_pinned_to_a_major_version():
    uses = [s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python@v5", "github/codeql-action/upload-sarif@v3"]


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("GPUDOCTOR_NETWORK_TESTS") != "1",
    reason="installs packages from a registry; tests talk to 127.0.0.1 only unless GPUDOCTOR_NETWORK_TESTS=1",
)
def test_install_step_gives_later_steps_a_gpudoctor_without_torch(tmp_path, workspace):
    # pip builds in the source tree (build/, *.egg-info): give it a copy, as the runner's checkout would be.
    action = tmp_path / "action"
    shutil.copytree(ROOT / "src", action / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "action.yml"):
        shutil.copy(ROOT / name, action / name)
    runner = Runner(tmp_path, action, paths="train")
    install = runner.run("install", workspace)
    if install.returncode != 0 and ("Could not find a version" in install.stderr or "connection" in install.stderr.lower()):
        pytest.skip("no package index reachable to install gpudoctor's dependencies")
    assert install.returncode == 0, install.stderr
    venv_python = tmp_path / "gpudoctor-venv" / "bin" / "python"
    no_torch = subprocess.run([str(venv_python), "-c", "import torch"], capture_output=True, timeout=60)
    assert no_torch.returncode != 0  # the action installs no torch
    env = dict(os.environ, PATH=runner.path)
    env.pop("PYTHONPATH", None)
    where = subprocess.run(["gpudoctor", "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0 and shutil.which("gpudoctor", path=runner.path).startswith(str(tmp_path))
