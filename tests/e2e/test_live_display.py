"""What a user watching a terminal sees while `allreduce` and `train-smoke` run:
the live results table with its progress bar, and the spinner naming each
rank's stage. stderr is a real pseudo-terminal here, so rich animates."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402

pytestmark = pytest.mark.slow
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(args: list[str], stdout_path: Path, timeout_s: float = 120) -> tuple[int, str]:
    """Run gpudoctor with stderr on a pty (stdout to a file); returns the exit
    code and everything the terminal received, escape sequences removed."""
    tag = new_tag()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="160", **{TAG_ENV: tag})
    for var in ("GPUDOCTOR_FAULT", "NO_COLOR", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"):
        env.pop(var, None)
    master, slave = pty.openpty()
    with open(stdout_path, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpudoctor", *args], stdin=subprocess.DEVNULL, stdout=out, stderr=slave, env=env
        )
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the pty's other end has exited
                break
            if not chunk:
                break
            seen += chunk
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        assert leftovers(tag) == []
    finally:
        os.close(master)
        kill_all(leftovers(tag, settle_s=0))
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, ANSI.sub("", seen.decode("utf-8", "replace"))


def test_allreduce_shows_the_table_filling_in_with_a_progress_bar(tmp_path):
    code, screen = on_a_terminal(
        ["allreduce", "--nproc", "2", "--sizes", "4K,64K", "--iters", "2", "--warmup", "1", "--json"], tmp_path / "out"
    )
    assert code == 0, screen[-2000:]
    assert "all_reduce: 2 rank(s), gloo on cpu" in screen, screen[-2000:]  # the table's title
    # The bar, from the first frame to the last (frames in between, and the first frame's
    # stage word, "starting ranks" or already "started", depend on timing).
    assert re.search(r"(starting ranks|started) .*\b0/2\b", screen) and re.search(r"finished .*\b2/2\b", screen), screen[-2000:]
    assert re.search(r"│\s*4K\s*│", screen) and re.search(r"│\s*64K\s*│", screen), screen[-2000:]  # rows as they come
    assert (tmp_path / "out").read_text().lstrip().startswith("{")  # stdout kept clean for --json


def test_train_smoke_spinner_names_each_ranks_stage(tmp_path):
    # Without --json: the spinner is for a person reading the report on the terminal.
    # Long enough that training spans many spinner refreshes: 100 steps can end between two.
    code, screen = on_a_terminal(["train-smoke", "--nproc", "2", "--steps", "600"], tmp_path / "out")
    assert code == 0, (tmp_path / "out").read_text()[-2000:]
    assert "train-smoke: starting ranks" in screen, screen[-2000:]
    assert re.search(r"train-smoke: rank [01] at train, step \d+", screen), screen[-2000:]
    assert "train-smoke: rank" not in (tmp_path / "out").read_text()  # progress never reaches stdout
