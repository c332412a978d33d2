"""launch.rank.held_stack_signal: a child started under it (multiprocessing's spawn, as
train-smoke's DataLoader workers are) survives the watchdog's SIGUSR1 that arrives before
its handler is set, and answers it with its stacks once answer_stack_signal() runs; a child
started without it dies of the same signal (the race it closes). Real processes, real signals."""

import multiprocessing
import os
import signal
import sys
import time

import pytest

from gpudoctor.launch.rank import answer_stack_signal, held_stack_signal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no SIGUSR1 on Windows")


def _late_handler(ready_path: str, err_path: str) -> None:
    """A child still 'importing' (sleeping) when the signal comes, then setting its handler."""
    sys.stderr = open(err_path, "w")  # faulthandler writes to fd 2: point it at the file
    os.dup2(sys.stderr.fileno(), 2)
    open(ready_path, "w").close()
    time.sleep(1.0)
    answer_stack_signal()
    time.sleep(1.0)  # the pending request is answered at the unblock above
    sys.stderr.flush()


def _start(tmp_path, held: bool):
    ctx = multiprocessing.get_context("spawn")
    ready, err = str(tmp_path / "ready"), str(tmp_path / "err")
    proc = ctx.Process(target=_late_handler, args=(ready, err))
    if held:
        with held_stack_signal():
            proc.start()
    else:
        proc.start()
    deadline = time.monotonic() + 60
    while not os.path.exists(ready) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.exists(ready), "the child never started"
    os.kill(proc.pid, signal.SIGUSR1)
    proc.join(timeout=60)
    if proc.is_alive():
        proc.kill()
        proc.join(timeout=10)
    return proc.exitcode, open(err).read()


def test_a_child_started_under_it_survives_an_early_request_and_answers_it(tmp_path):
    code, err = _start(tmp_path, held=True)
    assert code == 0, err
    assert "_late_handler" in err  # faulthandler's dump of the child's stack, after its handler was set


def test_sibling_a_child_started_without_it_dies_of_the_same_request(tmp_path):
    code, _ = _start(tmp_path, held=False)
    assert code == -signal.SIGUSR1


def test_the_starting_thread_gets_its_own_mask_back():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with held_stack_signal():
        assert signal.SIGUSR1 in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
