"""Running gpudoctor with its stderr on a real pseudo-terminal, so rich animates
(tests/e2e/test_allreduce.py: the live results table and its progress bar;
tests/e2e/test_train_smoke.py: the spinner naming each rank's stage)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from orphans import TAG_ENV, kill_all, leftovers, new_tag

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(args: list[str], stdout_path: Path, timeout_s: float = 120, columns: int = 160) -> tuple[int, str]:
    """Run gpudoctor with stderr on a pty (stdout to a file); returns the exit
    code and everything the terminal received, escape sequences removed."""
    tag = new_tag()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(columns), **{TAG_ENV: tag})
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
