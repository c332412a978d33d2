"""The pages tell the truth: every command example in README.md and docs/ is either run
here, as a user would paste it (a real shell, a real gpudoctor, on this CPU-only
machine), with what the page says it prints or exits compared; or listed in SKIP with
the reason it cannot or need not run here. A new example that is in neither fails
`test_every_example_is_run_or_skipped_for_a_reason`, so the lists cannot drift from
the pages. Found before: an example run past its own watchdog, `--save ./ckpt/`
writing a file named ckpt, an install line naming a package that is not gpudoctor."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "commands").glob("*.md"))]
SHELL_BLOCKS = ("", "sh", "bash", "shell", "console")
ENV_PREFIX = r"(?:[A-Z_]+=\S+ )*"
COMMAND = re.compile(rf"^{ENV_PREFIX}(?:gpudoctor|torchrun|srun|pbpaste|python -m gpudoctor)\b")


def _code_blocks(page: Path) -> list[list[str]]:
    """The shell code of a page: fenced blocks of a shell language, and README's indented ones."""
    text = page.read_text()
    blocks = [m.group(2).splitlines() for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
              if m.group(1) in SHELL_BLOCKS]  # fmt: skip
    if page.name == "README.md":
        blocks += [[line[4:] for line in m.group(0).splitlines()] for m in re.finditer(r"(?:^    \S[^\n]*\n)+", text, re.M)]
    return blocks


def _without_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line).strip()


def examples() -> dict[str, tuple[str, list[str]]]:
    """{"page: command": (the line as written, the output the page shows under it)}. In a
    block with `$ ` prompts only those lines are commands, the rest is their output."""
    found: dict[str, tuple[str, list[str]]] = {}
    for page in PAGES:
        for block in _code_blocks(page):
            prompted = any(line.startswith("$ ") for line in block)
            current = None
            for line in block:
                if prompted and not line.startswith("$ "):
                    if current is not None:
                        found[current][1].append(line)
                    continue
                command = line[2:] if prompted else line
                if "gpudoctor" not in command or not COMMAND.match(command.strip()):
                    current = None
                    continue
                current = f"{page.relative_to(ROOT)}: {_without_comment(command)}"
                found[current] = (command.strip(), [])
    return found


@dataclass(frozen=True)
class Run:
    exit: int | tuple[int, ...] = 0  # what the page says (or, where it says nothing, a healthy CPU machine gives)
    shows: tuple[str, ...] = ()  # text the page says it prints, each found in the output
    timeout: float = 120.0
    before: str = ""  # the example the page runs before this one, that it reads from


FAULT_EXIT_1 = Run(exit=1, shows=("allreduce-wrong-result",), timeout=180)
# Run here: cheap (a second or a few), and what the page claims can be checked on CPU.
RUN: dict[str, Run] = {
    "README.md: gpudoctor check": Run(),
    # warnings only: lint fails on errors unless --fail-on warning (its printed lines: test_readme_lint_output)
    "README.md: gpudoctor lint examples/train_broken.py": Run(shows=("Found 7 diagnostics",)),
    "README.md: gpudoctor lint examples/train_fixed.py": Run(),
    "docs/commands/lint.md: gpudoctor lint examples/train_broken.py": Run(),  # the output under it compared
    "docs/commands/lint.md: gpudoctor lint examples/train_fixed.py": Run(),
    "docs/commands/check.md: gpudoctor check": Run(),
    "docs/commands/check.md: gpudoctor check --markdown > report.md": Run(),
    "docs/commands/check.md: gpudoctor check --json > facts.json": Run(),
    "docs/commands/check.md: gpudoctor check --facts facts.json": Run(before="gpudoctor check --json > facts.json"),
    "docs/commands/check.md: gpudoctor check --visible 1,0": Run(exit=(0, 1), shows=("CUDA_VISIBLE_DEVICES='1,0'",)),
    "docs/commands/check.md: CUDA_VISIBLE_DEVICES=0,7,1 gpudoctor check": Run(exit=(0, 1), shows=("0,7,1",)),
    "docs/commands/check.md: gpudoctor check --json > $(hostname).json": Run(),
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 2 --sizes 4K --fault 0:wrong": FAULT_EXIT_1,
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 2 --timeout 10 --fault 1:hang": Run(
        exit=124, shows=("rank-hung",), timeout=180
    ),
}

COVERED = "multi-rank run of many seconds; the same command is run by"
SYNOPSIS = "a synopsis of the options, not a command"
PLACEHOLDER = "a placeholder for the user's own file or script"
GPU = "needs NVIDIA GPUs (this suite runs on CPU)"
NODES = "needs a launcher across nodes (tests/e2e/test_fleet.py runs check/allreduce/train-smoke under torchrun)"
SKIP: dict[str, str] = {
    "README.md: gpudoctor allreduce --nproc 2": f"{COVERED} tests/e2e/test_allreduce.py",
    "README.md: gpudoctor train-smoke": f"{COVERED} tests/e2e/test_train_smoke.py",
    "README.md: gpudoctor lint PATH...": SYNOPSIS,
    "README.md: gpudoctor run train.py [ARGS]": SYNOPSIS,
    "README.md: gpudoctor diagnose LOG|DIR|-": SYNOPSIS,
    "README.md: gpudoctor report": f"{COVERED} tests/e2e/test_report.py (check + allreduce + train-smoke: a minute)",
    "README.md: gpudoctor check && gpudoctor allreduce --nproc 2 && gpudoctor train-smoke --nproc 2": f"{COVERED} the e2e tests of each",
    "README.md: gpudoctor diagnose slurm-1234.out": PLACEHOLDER,
    "README.md: gpudoctor diagnose /tmp/torchelastic_x/": PLACEHOLDER,
    "docs/commands/allreduce.md: gpudoctor allreduce [--nproc N] [--backend auto|nccl|gloo] [--device auto|cpu|cuda]": SYNOPSIS,
    "docs/commands/allreduce.md: torchrun --standalone --nproc_per_node 8 -m gpudoctor allreduce": GPU,
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 4 --sizes 64K --bisect --fault 2:slow": f"{COVERED} tests/e2e/test_allreduce.py (4 ranks, a bisection: tens of seconds on 2 cores)",
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 4 --sizes 64K --bisect --fault 1:slowlink3": f"{COVERED} tests/controls/test_controls_verdicts.py and benchmarks/bisect_control.py (4 ranks, a bisection)",
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 4 --sizes 64K --bisect --fault 1:hiccup3": f"{COVERED} tests/e2e/test_run_stragglers.py (3 ranks, hiccup2 beside slowlink2)",
    "docs/commands/allreduce.md: gpudoctor allreduce": f"{COVERED} tests/e2e/test_allreduce.py",
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 4 --sizes 256M --dtype bfloat16": "256 MB across 4 CPU ranks: minutes on 2 cores; meant for GPUs",
    "docs/commands/allreduce.md: gpudoctor allreduce --op all_gather --min-bytes 1K --max-bytes 64M": f"{COVERED} tests/test_allreduce_options.py for all_gather (a full sweep: a minute on 2 cores)",
    "docs/commands/allreduce.md: gpudoctor allreduce --op all_gather --min-bytes 1K --max-bytes 1G --timeout 1800": GPU + "; the page says so",
    "docs/commands/allreduce.md: gpudoctor allreduce --json | jq '.results[] | [.bytes, .busbw_gbps]'": f"{COVERED} tests/e2e/test_allreduce.py (--json); jq is not installed here",
    "docs/commands/check.md: gpudoctor check [--json | --markdown] [--strict] [-v] [--facts FILE ...] [--visible LIST] [--timeout S] [--list-checks]": SYNOPSIS,
    "docs/commands/check.md: torchrun --nnodes N --nproc-per-node K ... -m gpudoctor check [--json]": SYNOPSIS,
    "docs/commands/check.md: torchrun --nnodes 16 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint $HEAD:29500 -m gpudoctor check": NODES,
    "docs/commands/check.md: srun --ntasks-per-node 1 python -m gpudoctor check": "needs Slurm",
    "docs/commands/check.md: gpudoctor check --facts gpu-01.json --facts gpu-02.json": PLACEHOLDER + " (snapshots of two nodes; tests/e2e/test_log_output.py compares three)",
    "docs/commands/check.md: gpudoctor check --facts a.json --facts b.json": PLACEHOLDER + " (tests/e2e/test_fleet.py compares two snapshots)",
    "docs/commands/check.md: torchrun --nnodes 4 --nproc-per-node 8 ... -m gpudoctor check": NODES,
    "docs/commands/diagnose.md: gpudoctor diagnose FILE|DIR|- [--json | --markdown] [--strict] [--explain ID]": SYNOPSIS,
    "docs/commands/lint.md: gpudoctor lint PATH... [--select ID,...] [--extend-select ID,...] [--ignore ID,...] [--fail-on error|warning|never] [--exit-zero]": SYNOPSIS,
    "docs/commands/report.md: gpudoctor report [-o FILE] [--nproc N] [--timeout S] [--skip STEP,...]": SYNOPSIS,
    "docs/commands/report.md: gpudoctor report --html report.html": f"{COVERED} tests/e2e/test_html.py (the page from real runs' JSON, in headless Chromium)",
    "docs/commands/allreduce.md: gpudoctor allreduce --nproc 3 --sizes 4K,64K,1M,4M --bisect --html allreduce.html": f"{COVERED} tests/e2e/test_html.py (--html, and the page of this very command's JSON in headless Chromium)",
    "docs/commands/run.md: gpudoctor run --nproc 2 --html run.html train.py": "train.py is the reader's own script; tests/e2e/test_html.py runs --html with tests/scripts/straggler/job.py",
    "docs/commands/run.md: gpudoctor run [--nproc N] [--hang-timeout S] [--json FILE] [--trace FILE] [--strict] [--timeout S] [--] SCRIPT [ARGS...]": SYNOPSIS,
    "docs/commands/run.md: gpudoctor run [--nproc N] [--hang-timeout S] [--json FILE] [--trace FILE] [--strict] [--timeout S] -m MODULE [ARGS...]": SYNOPSIS,
    "docs/commands/run.md: torchrun --nproc_per_node 2 -m gpudoctor run train.py [ARGS...]": SYNOPSIS,
    "docs/commands/run.md: gpudoctor run --nproc 2 --hang-timeout 10 tests/scripts/hang/stuck_compute.py": f"{COVERED} tests/e2e/test_run_hangs.py (with --hang-timeout 3)",
    "docs/commands/run.md: gpudoctor run --nproc 2 tests/scripts/hang/one_rank_fails.py raise": f"{COVERED} tests/e2e/test_diagnose_run_folder.py",
    "docs/commands/run.md: gpudoctor run train.py --epochs 2": PLACEHOLDER,
    "docs/commands/run.md: gpudoctor run --nproc 2 --json run.json train.py": PLACEHOLDER,
    "docs/commands/run.md: gpudoctor run -m mypkg.train --config c.yaml": PLACEHOLDER,
    "docs/commands/run.md: torchrun --nproc_per_node 4 -m gpudoctor run train.py": PLACEHOLDER,
    "docs/commands/run.md: gpudoctor run --nproc 4 --trace steps.json train.py": PLACEHOLDER,
    "docs/commands/run.md: gpudoctor run --strict --timeout 600 train.py": PLACEHOLDER,
    "docs/commands/train-smoke.md: gpudoctor train-smoke [--nproc N] [--backend auto|nccl|gloo] [--device auto|cpu|cuda]": SYNOPSIS,
    "docs/commands/train-smoke.md: torchrun --nproc-per-node 2 -m gpudoctor train-smoke": f"{COVERED} tests/e2e/test_join_env.py",
    "docs/commands/train-smoke.md: torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint $HEAD:29500 -m gpudoctor train-smoke --device cuda": GPU,
    "docs/commands/train-smoke.md: gpudoctor train-smoke --fault 1:nosync": f"{COVERED} tests/e2e/test_train_smoke.py",
    "docs/commands/train-smoke.md: gpudoctor train-smoke --timeout 10 --fault 1:hang": f"{COVERED} tests/e2e/test_train_smoke.py",
    "docs/commands/train-smoke.md: gpudoctor train-smoke": f"{COVERED} tests/e2e/test_train_smoke.py",
    "docs/commands/train-smoke.md: gpudoctor train-smoke --device cuda --nproc 8 --amp": GPU,
    "docs/commands/train-smoke.md: gpudoctor train-smoke --num-workers 4": f"{COVERED} tests/e2e/test_train_smoke.py (spawned workers: a minute on 2 cores)",
    "docs/commands/train-smoke.md: gpudoctor train-smoke --save ./ckpt/ --json > smoke.json": "a full train-smoke; where --save ./ckpt/ puts the file: tests/test_smoke_save_path.py",
}


def test_every_example_is_run_or_skipped_for_a_reason():
    found = set(examples())
    assert not set(RUN) & set(SKIP)
    assert sorted(found - set(RUN) - set(SKIP)) == [], "an example neither run nor skipped"
    assert sorted((set(RUN) | set(SKIP)) - found) == [], "listed but no longer on any page"


def _shell(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """`command` as pasted into bash, `gpudoctor` being this checkout's."""
    for name in ("examples", "tests"):
        if not (cwd / name).exists():
            (cwd / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "GPUDOCTOR_FAULT", "COLUMNS")}
    env.update(PY=sys.executable, NO_COLOR="1")
    script = 'gpudoctor() { "$PY" -m gpudoctor "$@"; }\n' + command
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


# The same command run by more than one test here: README's and check.md's `gpudoctor check`
# and the CPU sample of check.md; `gpudoctor check --json > facts.json`, an example of its own,
# the one `--facts facts.json` runs after, and the file docs/json.md's example is compared with.
# Each reads nothing and writes only its own folder, so it runs once (a `check` is seconds of
# CPU: it imports torch in a child process) and each test reads it, with the files it wrote.
_ONCE = ("gpudoctor check", "gpudoctor check --json > facts.json")
_ran_once: dict[str, tuple[subprocess.CompletedProcess, Path]] = {}


def _shell_once(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    if command not in _ONCE:
        return _shell(command, cwd, timeout)
    if command not in _ran_once:
        _ran_once[command] = (_shell(command, cwd, timeout), cwd)
    r, ran_in = _ran_once[command]
    if ran_in != cwd:
        for written in ran_in.iterdir():  # (examples/ and tests/ are _shell's links to folders)
            if written.is_file():
                shutil.copyfile(written, cwd / written.name)
    return r


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(RUN))
def test_example_does_what_the_page_says(key, tmp_path):
    line, shown = examples()[key]
    expect = RUN[key]
    if expect.before:
        assert _shell_once(expect.before, tmp_path, expect.timeout).returncode == 0
    r = _shell_once(_without_comment(line), tmp_path, expect.timeout)
    exits = expect.exit if isinstance(expect.exit, tuple) else (expect.exit,)
    assert r.returncode in exits, f"{key}: exit {r.returncode}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    said = f"exit {r.returncode}"
    if "# exit " in line:
        assert said in line, f"{key}: the page says {line.split('#', 1)[1].strip()!r}, it gave {said}"
    for text in expect.shows:
        assert text in r.stdout + r.stderr, f"{key}: {text!r} not printed"
    out = r.stdout.splitlines()
    for page_line in shown:  # what the page prints under a `$ ` command, "..." for lines left out
        if page_line.strip() and page_line.strip() != "...":
            assert page_line in out, f"{key}: the page shows {page_line!r}; not printed"


def _readme_block_after(anchor: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    after = text.split(anchor, 1)[1]
    block = re.search(r"(?:^    \S[^\n]*\n)+", after, re.M)
    assert block is not None
    return [line[4:] for line in block.group(0).splitlines()]


def test_readme_lint_output_is_what_lint_prints(tmp_path):
    shown = _readme_block_after("which prints, for the broken one (abridged):")
    r = _shell("gpudoctor lint examples/train_broken.py", tmp_path, 60)
    out = r.stdout.splitlines()
    missing = [line for line in shown if line.strip() != "..." and line not in out]
    assert missing == [], missing


@pytest.mark.slow
def test_check_page_sample_has_what_a_cpu_machine_prints(tmp_path):
    """docs/commands/check.md's CPU-only sample: its areas and finding ids, in the order shown."""
    page = (ROOT / "docs" / "commands" / "check.md").read_text()
    sample = page.split("On a CPU-only machine:", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    r = _shell_once("gpudoctor check", tmp_path, 120)
    assert r.returncode == 0, r.stderr
    ids = re.findall(r"\[([a-z0-9-]+)\]$", sample, re.M)
    printed = re.findall(r"\[([a-z0-9-]+)\]$", r.stdout, re.M)
    assert ids and [i for i in printed if i in ids] == ids, (ids, printed)
    assert sample.rstrip().splitlines()[-1].split(" — ")[0] == r.stdout.rstrip().splitlines()[-1].split(" — ")[0]


@pytest.mark.slow
def test_json_page_example_finding_is_what_check_prints(tmp_path):
    """docs/json.md's example: the envelope's keys and its one finding, as `check --json` gives them."""
    page = (ROOT / "docs" / "json.md").read_text()
    # Abridged on the page (no facts): read as it is, not checked against the schema (conftest.py).
    example = json.JSONDecoder().decode(page.split("```json\n", 1)[1].split("```", 1)[0])
    r = _shell_once("gpudoctor check --json > facts.json", tmp_path, 120)  # check.md's example: its file
    assert r.returncode == 0, r.stderr
    actual = json.loads((tmp_path / "facts.json").read_text())
    assert set(example) <= set(actual)
    [shown] = example["findings"]
    [real] = [f for f in actual["findings"] if f["id"] == shown["id"]]
    assert {k: v for k, v in shown.items() if k != "evidence"} == {k: v for k, v in real.items() if k != "evidence"}
    assert set(shown["evidence"]) == set(real["evidence"])
