"""The wheel users install: built from a copy of the sources, it carries py.typed,
the project URLs, the `gpudoctor` entry point and no hard torch requirement, and
its script runs from a fresh install next to an existing torch."""

from __future__ import annotations

import email
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy so the build leaves nothing (build/, *.egg-info) in the checkout.
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src-copy"
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", str(tmp / "dist"), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    (built,) = (tmp / "dist").glob("gpudoctor-*.whl")
    return built


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(z.read(name))


@pytest.mark.slow
def test_wheel_carries_py_typed_urls_and_the_entry_point(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "gpudoctor/py.typed" in names
    assert "[console_scripts]" in entry_points and "gpudoctor = gpudoctor.cli.app:main" in entry_points
    urls = dict(value.split(", ", 1) for value in metadata(wheel).get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Issues"} <= set(urls) and all(u.startswith("https://") for u in urls.values())


@pytest.mark.slow
def test_torch_is_only_an_extra(wheel):
    # Installing gpudoctor must never pull (or replace) a torch: it examines the user's own.
    torch_lines = [r for r in metadata(wheel).get_all("Requires-Dist") if r.split(";")[0].strip().startswith("torch")]
    assert torch_lines and all("extra ==" in r for r in torch_lines)


@pytest.mark.slow
def test_the_installed_script_runs_next_to_an_existing_torch(wheel, tmp_path):
    target = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, PYTHONPATH=str(target))  # the wheel's gpudoctor, this venv's typer/rich/torch
    version = subprocess.run([str(target / "bin" / "gpudoctor"), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpudoctor "), version.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import gpudoctor; print(gpudoctor.__file__)"], env=env, capture_output=True, text=True, timeout=60
    )
    assert where.stdout.startswith(str(target))
