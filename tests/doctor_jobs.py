"""`gpudoctor run --nproc 2` jobs that more than one test reads, each started once.

A failed job proves several things: what the live report says (tests/e2e/test_run_hangs.py)
and what `gpudoctor diagnose` reads back from the run folder it leaves
(tests/e2e/test_diagnose_run_folder.py). Each job is a few CPU-seconds of real ranks
importing torch, so the same command is run once per test session (once per xdist
worker) and every test asserts its own part of the one result. Only a job that ended
with nothing left behind is kept; one that failed to is run again by the next test
that asks, which then fails on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    def __init__(self, folder: Path):
        self._folder = folder
        self._done: dict[tuple, DoctorJob] = {}

    def run(self, script: str, *args: str, hang_timeout: str = "30", options: tuple[str, ...] = (), timeout: float = 150) -> DoctorJob:
        """`gpudoctor run --nproc 2 --hang-timeout H OPTIONS --json FILE SCRIPT ARGS` from the
        repository root, every process of it tagged and none left at the end."""
        key = (script, args, hang_timeout, options)
        if key not in self._done:
            self._done[key] = self._start(key, timeout)
        return self._done[key]

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
