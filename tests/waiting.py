"""Bounded waits on a condition: what a test does instead of sleeping before
it sends a signal or reads a result."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, proc: subprocess.Popen | None = None):
    """Poll until condition() is truthy and return its value; fail the test
    with `what` after timeout_s, or at once when `proc` has exited."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"{what}: the process exited {proc.returncode} first\n{out}\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:g} s")
        time.sleep(0.05)
