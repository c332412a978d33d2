"""The `gpudoctor` command itself: version, help, usage errors, start-up cost."""

import subprocess
import sys

import gpudoctor

CMD = [sys.executable, "-m", "gpudoctor"]


def run(*args, **kw):
    return subprocess.run([*CMD, *args], capture_output=True, text=True, timeout=120, **kw)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"gpudoctor {gpudoctor.__version__}"


def test_help_lists_every_command():
    r = run("--help")
    assert r.returncode == 0
    for command in ("check", "allreduce", "train-smoke", "lint", "run"):
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
    for args in (["--help"], ["--version"], ["check", "--help"], ["allreduce", "--help"], ["lint", "--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert r.stdout.strip().endswith("NO-TORCH"), (args, r.stdout[-200:], r.stderr[-500:])
