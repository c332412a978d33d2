"""The `gpudoctor` command itself: version, help, usage errors, start-up cost."""

import os
import subprocess
import sys

import pytest

import gpudoctor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CMD = [sys.executable, "-m", "gpudoctor"]


def run(*args, **kw):
    return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=120, **kw)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"gpudoctor {gpudoctor.__version__}"


def test_help_lists_every_command():
    r = run("--help")
    assert r.returncode == 0
    for command in ("check", "allreduce", "train-smoke", "lint", "run", "diagnose"):
        assert command in r.stdout


def test_unknown_command_and_option_are_one_line_usage_errors():
    for args in (["bogus"], ["--bogus"]):
        r = run(*args)
        assert r.returncode == 2
        assert r.stderr.strip().startswith("gpudoctor: error:")
        assert len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr


def test_help_and_version_do_not_import_torch():
    code = (
        "import sys\n"
        "from gpudoctor.cli.app import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    for args in (["--help"], ["--version"], ["check", "--help"], ["allreduce", "--help"], ["lint", "--help"], ["diagnose", "--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert r.stdout.strip().endswith("NO-TORCH"), (args, r.stdout[-200:], r.stderr[-500:])


@pytest.mark.parametrize("args", [["diagnose", "-"], ["diagnose", "-", "--markdown"], ["lint", "--help"]])
def test_a_stdout_that_cannot_encode_the_marks_gets_question_marks_not_a_traceback(args):
    # Windows' cp1252 when redirected to a file; PYTHONIOENCODING=ascii here.
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], input="[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n",
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
    )
    assert "Traceback" not in r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr
    assert r.returncode in (0, 1) and r.stdout.strip(), r.stderr
