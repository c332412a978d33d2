"""A signal to the doctor leaves no rank behind, for every command that starts
ranks: SIGINT, SIGTERM and SIGHUP are cleaned up by the supervisor (exit 130,
143, 129, report printed); SIGKILL gives the supervisor no chance, so the
kernel kills the ranks (PR_SET_PDEATHSIG, launch/lifeline.py).

Each case signals the doctor as soon as both its ranks exist (no sleep), and
waits for the ranks to be gone with a deadline."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402
from waiting import wait_until  # noqa: E402

from gpudoctor.launch.supervisor import KILL_WAIT_S, SWEEP_WAIT_S, TERM_GRACE_S  # noqa: E402

pytestmark = pytest.mark.slow

FOREVER_SCRIPT = "import time\nwhile True:\n    time.sleep(0.1)\n"
COMMANDS = {
    "allreduce": ["allreduce", "--nproc", "2", "--sizes", "1M", "--iters", "100000", "--json"],
    "train-smoke": ["train-smoke", "--nproc", "2", "--steps", "1000000", "--json"],
    "run": ["run", "--nproc", "2", "{script}"],
}
# The supervisor's own bound on its clean-up (SIGTERM grace, each rank's SIGKILL reap,
# the sweep), plus the report: on CI's two busy cores a deadline tighter than the bound
# the product promises fails on slowness, not on a hang.
CLEANUP_DEADLINE_S = TERM_GRACE_S + 2 * KILL_WAIT_S + SWEEP_WAIT_S + 30
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGKILL: -signal.SIGKILL}


def _clean_env(tag: str, tmp_path) -> dict:
    # PYTHONFAULTHANDLER: a doctor past its deadline is sent SIGABRT and prints
    # every thread's stack, so a hang says where it is (_finish).
    env = dict(os.environ, **{TAG_ENV: tag, "TMPDIR": str(tmp_path), "PYTHONFAULTHANDLER": "1"})
    for var in ("GPUDOCTOR_FAULT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID"):
        env.pop(var, None)
    return env


def _ranks_of(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    """The doctor's output once it has exited; past the deadline, its threads' stacks in the failure."""
    try:
        return proc.communicate(timeout=CLEANUP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise AssertionError(f"the doctor was still running {CLEANUP_DEADLINE_S:g} s after the signal; its stacks:\n{err[-8000:]}")


def _as_from_a_terminal() -> None:
    """The doctor's stop signals as a shell at a terminal leaves them. Inherited dispositions
    would leak the runner's: under `nohup` (or a background job) SIGHUP (SIGINT) is ignored,
    and the supervisor rightly keeps an ignored signal ignored (tests/test_launch.py), so the
    SIGHUP case waited out its deadline on a CI run started with nohup."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start(command: str, tmp_path, tag: str) -> subprocess.Popen:
    script = tmp_path / "forever.py"
    script.write_text(FOREVER_SCRIPT)
    args = [a.format(script=script) for a in COMMANDS[command]]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudoctor", *args],
        env=_clean_env(tag, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    wait_until(lambda: len(_ranks_of(proc.pid)) >= 2, 60, "the ranks never started", proc)
    return proc


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_to_the_doctor_leaves_no_rank_behind(tmp_path, command, sig):
    tag = new_tag()
    proc = start(command, tmp_path, tag)
    try:
        ranks = _ranks_of(proc.pid)
        proc.send_signal(sig)
        out, err = _finish(proc)
        assert proc.returncode == EXIT[sig], err
        if sig != signal.SIGKILL and command != "run":
            assert json.loads(out)["findings"][0]["id"] == "launch-interrupted"
        assert leftovers(tag, settle_s=10) == [], [r.pid for r in ranks]
    finally:
        kill_all(leftovers(tag, settle_s=0))
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_three_quick_ctrl_c_do_not_cut_the_clean_up_short(tmp_path):
    tag = new_tag()
    proc = start("allreduce", tmp_path, tag)
    try:
        for _ in range(3):
            proc.send_signal(signal.SIGINT)
        out, err = _finish(proc)
        assert proc.returncode == 130, err
        assert json.loads(out)["findings"][0]["id"] == "launch-interrupted"
        assert "Traceback" not in err
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
        if proc.poll() is None:
            proc.kill()
            proc.wait()
