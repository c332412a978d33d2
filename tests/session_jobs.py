"""A real job that several tests of a module read, run once per test session.

A module-scoped fixture runs once per process, and under xdist (`--dist worksteal`)
the tests of one module are often spread over two or three workers: each worker
that got one of them ran the job again (a `run --nproc 2` job is seconds of CPU,
its ranks importing torch). Here the first worker to ask runs it, in a folder of
the session's that every worker sees, under a lock; the others wait for it and read
what it left: the completed process, and the files it wrote in its folder. A job
whose start raised keeps nothing: the next test that asks runs it again, and fails
on its own. (tests/doctor_jobs.py does the same for the hang doctor's jobs.)"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path
from typing import Callable


def run_once(tmp_path_factory, name: str, start: Callable[[Path], subprocess.CompletedProcess]) -> tuple[subprocess.CompletedProcess, Path]:
    """`start(folder)` once per session, in a folder of its own named `name`; returns its
    completed process and that folder (the same for every worker)."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "session-jobs"
    shared.mkdir(exist_ok=True)
    folder, kept = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        # Let go when the file closes. No deadline of its own: the job's own timeout bounds the wait.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.exists():
            return subprocess.CompletedProcess(**json.loads(kept.read_text())), folder
        folder.mkdir(exist_ok=True)
        p = start(folder)
        kept.write_text(json.dumps({"args": p.args, "returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}))
        return p, folder
