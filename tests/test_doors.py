"""One door per command: for each bad input, the CLI (a real `python -m gpudoctor`
subprocess) exits 2 with one line `gpudoctor: error: M`, and the Python side
(gpudoctor.diagnose / gpudoctor.lint, or the command's door where the API has no such
argument) raises a ValueError whose text is exactly M: a FileNotFoundError too for a
path that is not there. Both come from the command's one validate()."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpudoctor
from gpudoctor.commands import diagnose as diagnose_door
from gpudoctor.commands import lint as lint_door
from gpudoctor.commands.diagnose.options import Options as DiagnoseOptions
from gpudoctor.commands.lint.options import Options as LintOptions
from gpudoctor.commands.run.options import Options as RunOptions
from gpudoctor.commands.run.options import validate as run_validate
from gpudoctor.core.usage import UsageError

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A folder of the inputs users get wrong; both doors run in it."""
    (tmp_path / "ok.py").write_text("import os\n")
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "binary.log").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "nothing").mkdir()
    os.symlink("loop.py", tmp_path / "loop.py")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "ok.py").write_text("import os\n")
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.gpudoctor.lint]\nignore = ["no-such-rule"]\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    env.pop("GPUDOCTOR_RUN", None)
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


# (CLI arguments, the same input on the Python side, a word the message must hold, FileNotFoundError?)
CASES = [
    # diagnose
    (["diagnose"], lambda: gpudoctor.diagnose(), "give a log FILE", False),
    (["diagnose", "no/such.log"], lambda: gpudoctor.diagnose(path="no/such.log"), "no such file", True),
    (["diagnose", "empty.log"], lambda: gpudoctor.diagnose(path="empty.log"), "empty.log is empty", False),
    (["diagnose", "binary.log"], lambda: gpudoctor.diagnose(path="binary.log"), "is a binary file", False),
    (["diagnose", "nothing"], lambda: gpudoctor.diagnose(path="nothing"), "no files in this folder", False),
    (["diagnose", "loop.py"], lambda: gpudoctor.diagnose(path="loop.py"), "symbolic link loop", False),
    (["diagnose", "--explain", "nope"], lambda: diagnose_door.explain(DiagnoseOptions(explain="nope")), "unknown pattern id 'nope'", False),
    # lint
    (["lint"], lambda: gpudoctor.lint([]), "give at least one PATH", False),
    (["lint", "no/such.py"], lambda: gpudoctor.lint("no/such.py"), "no such file or directory: no/such.py", True),
    (["lint", "loop.py"], lambda: gpudoctor.lint("loop.py"), "symbolic link loop", True),
    (["lint", "ok.py", "--select", "nope"], lambda: gpudoctor.lint("ok.py", select="nope"), "unknown rule id 'nope' (known: ", False),
    (["lint", "ok.py", "--ignore", "dataparallel,nope"], lambda: gpudoctor.lint("ok.py", ignore=["dataparallel", "nope"]), "unknown rule id 'nope'", False),
    (["lint", "ok.py", "--format", "xml"], lambda: lint_door.run(LintOptions(paths=("ok.py",), format="xml")), "unknown format 'xml'", False),
    (["lint", "ok.py", "--fail-on", "info"], lambda: lint_door.run(LintOptions(paths=("ok.py",), fail_on="info")), "unknown --fail-on 'info'", False),
    (["lint", "ok.py", "--json", "--format", "sarif"], lambda: lint_door.run(LintOptions(paths=("ok.py",), json=True, format="sarif")), "choose one of --json and --format", False),
    (["lint", "--explain", "nope"], lambda: lint_door.explain(LintOptions(explain="nope")), "unknown rule id 'nope'", False),
    # run (no API function: its door's check)
    (["run"], lambda: run_validate(RunOptions()), "give a script to run", False),
    (["run", "--strict", "-m"], lambda: run_validate(RunOptions(target=("-m",), strict=True)), "-m needs a module name", False),
    (["run", "no/such.py"], lambda: run_validate(RunOptions(target=("no/such.py",))), "no/such.py", False),
    (["run", "--nproc", "0", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), nproc=0)), "--nproc must be between 1 and", False),
    (["run", "--nproc", "100000", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), nproc=100000)), "--nproc", False),
    (["run", "--timeout", "0", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), timeout=0.0)), "--timeout 0: must be at least 0.1", False),
    (["run", "--hang-timeout", "-1", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), hang_timeout=-1.0)), "--hang-timeout -1", False),
    (["run", "--json", "no/dir/r.json", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), json_file="no/dir/r.json")), "--json no/dir/r.json", False),
    (["run", "--trace", "nothing", "ok.py"], lambda: run_validate(RunOptions(target=("ok.py",), trace="nothing")), "--trace nothing", False),
]


@pytest.mark.parametrize("args, call, words, missing", CASES, ids=[" ".join(c[0]) or "-" for c in CASES])
def test_the_cli_and_the_api_say_the_same_line(here, args, call, words, missing):
    proc = cli(args, here)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.startswith("gpudoctor: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stdout == ""
    said = proc.stderr[len("gpudoctor: error: ") :].rstrip("\n")
    assert words in said
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, UsageError)
    assert isinstance(info.value, FileNotFoundError) is missing
    assert str(info.value) == said


def test_a_config_error_is_the_same_line_from_the_cli_and_the_door(here, monkeypatch):
    """The CLI reads [tool.gpudoctor.lint]; gpudoctor.lint() does not (config=False)."""
    proc = cli(["lint", "ok.py"], here / "project")
    assert proc.returncode == 2 and "unknown rule id 'no-such-rule' in " in proc.stderr
    monkeypatch.chdir(here / "project")  # undone after the test: the worker runs other tests next
    with pytest.raises(UsageError) as info:
        lint_door.run(LintOptions(paths=("ok.py",)))
    assert proc.stderr == f"gpudoctor: error: {info.value}\n"
    assert gpudoctor.lint("ok.py").ok  # the API's call says everything: no pyproject.toml read


def test_valid_input_gives_the_same_report_through_both_doors(here):
    (here / "train.py").write_text("import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n")
    proc = cli(["lint", "--json", "train.py"], here)
    import json

    api = gpudoctor.lint("train.py")
    assert [f.id for f in api.findings] == ["dataparallel"]
    assert proc.returncode == 0 and json.loads(proc.stdout) == api.to_dict()  # a warning: exit 0


def test_run_for_one_process_is_an_exec_for_the_cli_to_carry_out(here):
    """No --nproc: the door decides the exec (the script takes the CLI's place) and starts nothing."""
    from gpudoctor.commands import run as run_door
    from gpudoctor.hooks import session

    plan = run_door.run(RunOptions(target=("ok.py", "--lr", "1"), strict=True, timeout=5.0, json_file="r.json"))
    assert isinstance(plan, run_door.Exec)
    assert plan.argv == (sys.executable, "-m", "gpudoctor.hooks.main", "ok.py", "--lr", "1")
    assert plan.env[session.ENV_ON] == "1" and plan.env[session.ENV_STRICT] == "1"
    assert plan.env[session.ENV_TIMEOUT] == "5.0" and plan.env[session.ENV_JSON] == str(here / "r.json")
    assert not (here / "r.json").exists()
