"""`gpudoctor run --nproc 2` jobs that more than one test reads, each started once.

A failed job proves several things: what the live report says (tests/e2e/test_run_hangs.py)
and what `gpudoctor diagnose` reads back from the run folder it leaves
(tests/e2e/test_diagnose_run_folder.py). Each job is a few CPU-seconds of real ranks
importing torch, so the same command is run once per test session and every test
asserts its own part of the one result. Under xdist the workers share it through a
folder of the session's (the two files' tests are rarely given to one worker): the
first worker to ask runs the job under a lock, the others wait for it and read what it
left. Only a job that ended with nothing left behind is kept; one that failed to is
run again by the next test that asks, which then fails on its own."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from orphans import TAG_ENV, kill_all, leftovers, new_tag

ROOT = Path(__file__).resolve().parents[1]
# Never join the pytest process's own job, never inherit a fault.
_NOT_INHERITED = ("GPUDOCTOR_RUN", "GPUDOCTOR_FAULT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                  "SLURM_PROCID", "SLURM_NTASKS")  # fmt: skip


@dataclass(frozen=True)
class DoctorJob:
    process: subprocess.CompletedProcess
    report: dict  # the --json file, as written


class DoctorJobs:
    def __init__(self, folder: Path, shared: Path | None = None):
        self._folder = folder
        self._shared = shared  # the session's folder every xdist worker sees; None: one process
        self._done: dict[tuple, DoctorJob] = {}

    def run(self, script: str, *args: str, hang_timeout: str = "30", options: tuple[str, ...] = (), timeout: float = 150) -> DoctorJob:
        """`gpudoctor run --nproc 2 --hang-timeout H OPTIONS --json FILE SCRIPT ARGS` from the
        repository root, every process of it tagged and none left at the end."""
        key = (script, args, hang_timeout, options)
        if key not in self._done:
            self._done[key] = self._start(key, timeout) if self._shared is None else self._once(key, timeout)
        return self._done[key]

    def _once(self, key: tuple, timeout: float) -> DoctorJob:
        """The job as the first worker that asked for it ran it (it is run here if none has)."""
        assert self._shared is not None
        self._shared.mkdir(exist_ok=True)
        name = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        kept = self._shared / f"{name}.json"
        with open(self._shared / f"{name}.lock", "w") as lock:
            deadline = time.monotonic() + timeout + 60  # the other worker's run, then its clean-up
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go when the file closes
                    break
                except BlockingIOError:
                    assert time.monotonic() < deadline, f"another worker's run of {key} never ended"
                    time.sleep(0.2)
            if kept.exists():
                saved = json.loads(kept.read_text())
                return DoctorJob(subprocess.CompletedProcess(**saved["process"]), saved["report"])
            job = self._start(key, timeout)  # raises when the job left a process behind: nothing kept
            p = job.process
            process = {"args": p.args, "returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
            kept.write_text(json.dumps({"process": process, "report": job.report}))
            return job

    def _start(self, key: tuple, timeout: float) -> DoctorJob:
        script, args, hang_timeout, options = key
        tag = new_tag()
        out = self._folder / f"job{len(self._done)}.json"
        env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
        env[TAG_ENV] = tag
        cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", "--hang-timeout", hang_timeout, *options]
        cmd += ["--json", str(out), script, *args]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
            assert leftovers(tag) == []
        finally:
            kill_all(leftovers(tag, settle_s=0))
        return DoctorJob(r, json.loads(out.read_text()))
