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


COMMANDS = [["check"], ["allreduce", "--sizes", "4K"], ["train-smoke"]]


def first_error(env, command):
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *command, "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    failed = [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]
    assert failed[0]["id"] == "torch-import-failed" and failed[0]["fix"]
    return failed[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_broken_torch_is_a_finding_not_a_traceback(broken_torch, command):
    assert "libcudart.so.12" in first_error(broken_torch, command)["title"]


def run_two_ranks(env, tmp_path, source):
    """`gpudoctor run --nproc 2` on a script with this source."""
    script = tmp_path / "job.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", str(script)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_run_with_ranks_reports_the_broken_torch_before_starting_any(broken_torch, tmp_path):
    r = run_two_ranks(broken_torch, tmp_path, "print('hello')\n")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and "torch-import-failed" in r.stderr
    assert "hello" not in r.stdout


@pytest.fixture
def no_torch(tmp_path):
    # gpudoctor does not depend on torch, so "not installed" is a real state; this
    # finder makes `import torch` fail exactly as it does in a Python without one.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ModuleNotFoundError(f\"No module named {name!r}\", name=name)\n"
        "sys.meta_path.insert(0, NoTorch())\n"
    )
    src = os.path.dirname(os.path.dirname(__import__("gpudoctor").__file__))
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), src]))


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_torch_says_so(no_torch, command):
    finding = first_error(no_torch, command)
    assert finding["title"] == "torch is not installed in this Python environment"
    assert finding["fix"].startswith("pip install torch")


def test_lint_needs_no_torch(no_torch):
    fixed = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_fixed.py")
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "lint", fixed], env=no_torch, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_run_says_torch_is_missing_and_still_runs_the_script(no_torch, tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "run", str(script)], env=no_torch, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and r.stdout == "hello\n"
    assert "torch is not installed" in r.stderr and "runtime checks" in r.stderr


@pytest.fixture
def broken_cpu_torch(tmp_path):
    """A CPU-only build (its version file says so) whose import raises: the launcher
    reads the file and starts the ranks without importing torch; the ranks fail."""
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "version.py").write_text("__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n")
    (pkg / "__init__.py").write_text('raise ImportError("libtorch_cpu.so: cannot open shared object file")\n')
    return dict(os.environ, PYTHONPATH=str(tmp_path))


@pytest.mark.parametrize("command", [["allreduce", "--sizes", "4K", "--nproc", "2"], ["train-smoke", "--nproc", "2"]])
def test_ranks_that_cannot_import_a_cpu_torch_are_explained_by_it(broken_cpu_torch, command):
    assert "libtorch_cpu.so" in first_error(broken_cpu_torch, command)["title"]


def test_run_with_ranks_explains_their_failure_by_the_cpu_torch(broken_cpu_torch, tmp_path):
    r = run_two_ranks(broken_cpu_torch, tmp_path, "import torch\n")
    assert r.returncode == 1
    assert "torch-import-failed" in r.stderr and "libtorch_cpu.so" in r.stderr


def test_a_cpu_build_s_launcher_leaves_importing_torch_to_its_ranks():
    """Start-up (issue 14): the ranks import torch at once instead of after this process did."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "4K",
         "--iters", "1", "--warmup", "0", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    from gpudoctor.probe.cuda import cpu_build_facts

    imported = [line for line in r.stderr.splitlines() if line.startswith("import time:") and line.rstrip().endswith("| torch")]
    assert imported == [] if cpu_build_facts() is not None else imported
