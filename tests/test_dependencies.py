"""What installing gpudoctor pulls in (pyproject's dependencies) and the code paths that
depend on it: the lint config's TOML reader, train-smoke's digests without numpy."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SRC = str(ROOT / "src")


def _base_requirements() -> dict[str, Requirement]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [Requirement(line) for line in doc["project"]["dependencies"]]
    return {r.name: r for r in reqs}


def test_tomli_declared_where_the_standard_library_has_no_tomllib():
    tomli = _base_requirements()["tomli"]
    assert tomli.marker is not None
    assert tomli.marker.evaluate({"python_version": "3.10"})
    assert not tomli.marker.evaluate({"python_version": "3.11"})


def test_numpy_is_not_a_base_dependency():
    # No gpudoctor module imports numpy; it was 73 MB of the lint-only install.
    assert "numpy" not in _base_requirements()
    hits = [p for p in (ROOT / "src").rglob("*.py") if "import numpy" in p.read_text() or ".numpy()" in p.read_text()]
    assert hits == []


def test_typer_has_an_upper_bound():
    spec = _base_requirements()["typer"].specifier
    assert any(s.operator == "<" for s in spec)
    assert spec.contains("0.29.2")  # the version the docs' help output was written with


def _lint_without_toml_reader(folder: Path) -> subprocess.CompletedProcess:
    # Python 3.10 without tomli, on a 3.11+ interpreter: both imports are made to fail.
    code = (
        "import sys; sys.modules['tomllib'] = None; sys.modules['tomli'] = None; "
        "from gpudoctor.cli.app import main; sys.argv = ['gpudoctor', 'lint', 'train.py']; main()"
    )
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=60)


def test_lint_section_without_a_toml_reader_is_a_usage_error_not_silence(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nignore = ["dataparallel"]\n')
    (tmp_path / "train.py").write_text("x = 1\n")
    done = _lint_without_toml_reader(tmp_path)
    assert done.returncode == 2, done.stderr
    assert "pip install tomli" in done.stderr and "Traceback" not in done.stderr


def test_pyproject_naming_gpudoctor_without_the_section_lints_without_a_toml_reader(tmp_path):
    # The sibling: gpudoctor as a dev dependency is not a section to read.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["gpudoctor"]\n')
    (tmp_path / "train.py").write_text("x = 1\n")
    done = _lint_without_toml_reader(tmp_path)
    assert done.returncode == 0, done.stderr


def test_train_smoke_digest_needs_no_numpy():
    code = (
        "import sys, hashlib, struct; sys.modules['numpy'] = None\n"
        "import torch\n"
        "from gpudoctor.commands.train_smoke.rank import _digest\n"
        "t = torch.tensor([1.0, -2.5, 3.25], dtype=torch.float32)\n"
        "expected = hashlib.sha256(struct.pack('<3f', 1.0, -2.5, 3.25)).hexdigest()[:16]\n"
        "assert _digest(torch, t) == expected, (_digest(torch, t), expected)\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
