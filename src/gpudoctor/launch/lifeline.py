"""Ranks that die with the doctor. The supervisor cleans up after SIGINT, SIGTERM
and SIGHUP, but nothing runs in a process killed by SIGKILL (or the OOM killer):
its ranks sit in process groups of their own and would hold their port and
cores until the backend's timeout (30 minutes on gloo). On Linux the kernel can
do the clean-up: PR_SET_PDEATHSIG makes it send SIGKILL to a child the moment
the thread that started it exits.

`child_setup(parent_pid)` is run in the forked child before exec (Popen's
preexec_fn), so the rank is covered before it runs a line of its own.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _load_prctl() -> Callable[..., int] | None:
    # Looked up once, in the parent: the forked child only calls it (no dlopen,
    # no allocation that could wait on a lock held by another thread at fork).
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def available() -> bool:
    """Does this platform let a child die with its parent (Linux only)?"""
    return _PRCTL is not None


def child_setup(parent_pid: int, *, own_group: bool) -> Callable[[], None]:
    """What the child runs between fork and exec: its own process group (so a
    terminal's Ctrl-C reaches only the supervisor, which then stops each rank's
    whole group), then SIGKILL on the supervisor's death."""

    def setup() -> None:
        if own_group:
            os.setpgid(0, 0)
        if _PRCTL is None:
            return
        _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The supervisor may have died between fork and prctl: then the signal
        # was already missed and the child has been re-parented. Die now.
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGKILL)

    return setup
