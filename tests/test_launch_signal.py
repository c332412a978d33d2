"""How the supervisor stops a rank and what it started, on POSIX (a signal to the
rank's process group) and on Windows (simulated where the code decides: the
`platform` argument; the psutil tree walk it takes there runs on Linux too)."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from gpudoctor.launch.supervisor import DUMP_STACKS, KILL, TERM, _own_process_group, _signal_group

# A rank that starts a worker (think DataLoader) and prints the worker's pid.
RANK = (
    "import subprocess, sys, time\n"
    "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(w.pid, flush=True)\n"
    "time.sleep(60)\n"
)


@pytest.fixture
def rank_with_worker():
    proc = subprocess.Popen([sys.executable, "-c", RANK], stdout=subprocess.PIPE, text=True, **_own_process_group())
    worker = psutil.Process(int(proc.stdout.readline()))
    yield proc, worker
    for p in (worker, psutil.Process(proc.pid) if proc.poll() is None else None):
        if p is not None and p.is_running():
            p.kill()
    proc.wait(timeout=10)
    proc.stdout.close()


def gone(process: psutil.Process, timeout: float = 10.0) -> bool:
    try:
        process.wait(timeout=timeout)  # reaps it when it is our child, waits for it otherwise
    except psutil.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("platform", ["linux", "win32"])
@pytest.mark.parametrize("action", [TERM, KILL])
def test_the_rank_and_its_worker_are_stopped(rank_with_worker, platform, action):
    proc, worker = rank_with_worker
    _signal_group(proc, action, platform=platform)
    assert proc.wait(timeout=10) != 0
    assert gone(worker)


def test_windows_has_no_stack_dump_signal_and_leaves_the_rank_running(rank_with_worker):
    proc, worker = rank_with_worker
    _signal_group(proc, DUMP_STACKS, platform="win32")
    time.sleep(0.2)  # nothing was sent; a short look that it is still there
    assert proc.poll() is None and worker.is_running()


def test_windows_never_signals_a_reaped_rank(rank_with_worker):
    proc, worker = rank_with_worker
    psutil.Process(proc.pid).kill()
    proc.wait(timeout=10)
    _signal_group(proc, KILL, platform="win32")  # its pid may be another process's now: nothing sent
    assert worker.is_running()  # an orphan now, killed by the fixture
