"""cli/early.py: which command lines start torch's probe, or exec `run`'s runtime,
before the CLI is imported."""

import os
import subprocess
import sys

import pytest

from gpudoctor.cli.early import is_plain_check, is_plain_run

SCRIPT = "/venv/bin/gpudoctor"
MODULE = os.path.join("site-packages", "gpudoctor", "__main__.py")


@pytest.mark.parametrize(
    "argv",
    [
        [SCRIPT, "check"],
        [MODULE, "check", "--json"],
        [SCRIPT, "check", "--markdown", "--strict"],
    ],
)
def test_a_plain_check_starts_the_probe_early(argv):
    assert is_plain_check(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [SCRIPT, "check", "--facts", "facts.json"],  # nothing to probe
        [SCRIPT, "check", "--visible", "1,0"],  # another environment
        [SCRIPT, "check", "--help"],
        [SCRIPT, "lint", "train.py"],
        [SCRIPT],
        ["/usr/bin/pytest", "check"],  # not the gpudoctor program
        ["-c", "check"],
    ],
)
def test_anything_else_does_not(argv):
    assert not is_plain_check(argv)


@pytest.mark.parametrize("env", [{"RANK": "1", "WORLD_SIZE": "2"}, {"SLURM_PROCID": "0"}])
def test_not_in_the_ranks_of_a_job(monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert not is_plain_check([SCRIPT, "check"])


def test_importing_the_cli_for_a_plain_check_starts_the_child():
    code = (
        "import sys\n"
        f"sys.argv = [{SCRIPT!r}, 'check']\n"
        "import gpudoctor.cli.app\n"
        "from gpudoctor.probe import torch_info\n"
        "early = torch_info._early\n"
        "print(early is not None and early.proc is not None, 'torch' in sys.modules)\n"
        "early.kill()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "SLURM_PROCID")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.stdout.split() == ["True", "False"], r.stderr


@pytest.mark.parametrize(
    "argv, plain",
    [
        ([SCRIPT, "run", "train.py", "--lr", "3", "--json", "x"], True),  # the script's own options
        ([MODULE, "run", "-m", "pkg.train"], True),
        ([SCRIPT, "run", "--nproc", "2", "train.py"], False),  # run's own options: the CLI parses them
        ([SCRIPT, "run", "--help"], False),
        ([SCRIPT, "run"], False),  # no target: the CLI's usage error
        (["/usr/bin/pytest", "run", "train.py"], False),
    ],
)
def test_a_plain_run_goes_straight_to_the_runtime(argv, plain):
    assert is_plain_run(argv) is plain


def test_bare_explain_of_lint_becomes_explain_all():
    from gpudoctor.cli.early import bare_explain

    assert bare_explain(["lint", "--explain"]) == ["lint", "--explain", "all"]
    assert bare_explain(["lint", "--explain", "--json"]) == ["lint", "--explain", "all", "--json"]
    assert bare_explain(["lint", "--explain", "dataparallel"]) == ["lint", "--explain", "dataparallel"]
    assert bare_explain(["diagnose", "--explain"]) == ["diagnose", "--explain"]  # a pattern id is needed there
    assert bare_explain(["lint", "a.py"]) == ["lint", "a.py"] and bare_explain([]) == []
