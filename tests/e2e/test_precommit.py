"""The pre-commit hook (.pre-commit-hooks.yaml) as users run it: pre-commit's own
manifest validator, and `pre-commit try-repo` building the hook's environment and
linting a broken and a fixed script in a fresh git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pre_commit = pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    r = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(MANIFEST)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    (hook,) = load_manifest(str(MANIFEST))
    assert hook["id"] == "gpudoctor-lint" and hook["entry"] == "gpudoctor lint"
    assert hook["types_or"] == ["python", "jupyter"] and hook["language"] == "python"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(
    os.environ.get("GPUDOCTOR_NETWORK_TESTS") != "1",
    reason="installs packages from a registry; tests talk to 127.0.0.1 only unless GPUDOCTOR_NETWORK_TESTS=1",
)
def test_try_repo_fails_the_broken_script_and_passes_the_fixed_one(tmp_path):
    repo = tmp_path / "user-project"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copy(ROOT / "examples" / "train_broken.py", repo / "broken.py")
    shutil.copy(ROOT / "examples" / "train_fixed.py", repo / "fixed.py")
    (repo / "notes.txt").write_text("not python: the hook's `types_or: [python, jupyter]` skips it\n")
    # warnings alone (broken.py) do not fail the hook; an error (a certain hang) does
    (repo / "hang.py").write_text("import torch.distributed as dist\n\nif dist.get_rank() == 0:\n    dist.barrier()\n")
    _git(repo, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    env.pop("PYTHONPATH", None)  # the hook must run from the environment pre-commit builds for it
    for who in ("AUTHOR", "COMMITTER"):  # try-repo commits a shadow copy of uncommitted changes
        env.setdefault(f"GIT_{who}_NAME", "test")
        env.setdefault(f"GIT_{who}_EMAIL", "test@example.invalid")
    r = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "gpudoctor-lint", "--all-files"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = r.stdout + r.stderr
    if "An unexpected error has occurred" in out and "pip" in out:
        pytest.skip("pre-commit could not install the hook's environment (no package index reachable)")
    assert r.returncode == 1, out
    assert "hang.py:4:5: collective-under-rank-condition error:" in out
    assert "broken.py:3:15: deprecated-launch warning:" in out and "broken.py:64:15: sampler-no-set-epoch" in out
    assert "fixed.py:" not in out and "(3 checked)" in out  # notes.txt was not passed
