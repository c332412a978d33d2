"""The job's last sweep: no process the job started outlives it, not even one that
left the rank's process group (a daemon that called setsid and forked, now a child
of init) and not even when the supervisor itself is SIGKILLed.

Every rank's environment carries the job's tag (launch/rundir.py JOB_TAG_ENV), and
a process inherits its parent's environment, so each descendant carries it too. The
supervisor starts this sweeper first, as a separate process in a session of its own,
holding the read end of a pipe whose write end only the supervisor has. The sweeper
waits for that pipe to close: the supervisor closes it when the job is over, or the
kernel does when the supervisor dies, however it dies. Then it SIGKILLs every process
whose environment holds the tag, again until none is left or SWEEP_S has passed.

A descendant that replaced its whole environment (`env -i`) is not found; one started
by another user cannot be read. Linux only (it reads /proc).

Run as `python -I -S sweep.py NAME=VALUE`: the standard library only, so that it
starts in milliseconds and reads nothing from the job's environment.
"""

from __future__ import annotations

import os
import signal
import sys
import time

SWEEP_S = 2.0  # how long the sweeper keeps killing a tree that forks while it is killed
ROUND_S = 0.05  # between two looks at /proc


def available() -> bool:
    """Whether this machine lets the sweeper find a process's environment (Linux)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def _has_entry(pid: int, entry: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return entry in fh.read().split(b"\0")
    except OSError:  # gone, another user's, a kernel thread
        return False


def _kill_if_tagged(pid: int, entry: bytes) -> bool:
    """SIGKILL `pid` when its environment holds `entry`. Through a pidfd opened before
    the environment is read, so a pid reused in between is never the one signalled."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):  # no pidfd here: a plain kill
        fd = -1
    try:
        if not _has_entry(pid, entry):
            return False
        if fd >= 0:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def sweep(entry: str, limit_s: float = SWEEP_S) -> int:
    """SIGKILL every process (this one aside) whose environment holds `entry`
    ("NAME=VALUE"), looking again until a look finds none or `limit_s` has passed;
    how many kills were sent. A killed process is a zombie until reaped, and a
    zombie's environment reads empty: it is not found twice."""
    wanted = entry.encode()
    me = os.getpid()
    deadline = time.monotonic() + limit_s
    sent = 0
    while True:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me]
        found = sum(_kill_if_tagged(pid, wanted) for pid in pids)
        sent += found
        if not found or time.monotonic() > deadline:
            return sent
        time.sleep(ROUND_S)


def main(argv: list[str]) -> int:
    # Ctrl-C or a hung-up terminal is the supervisor's to handle; this process waits
    # for it to be gone, whatever the reason, and then sweeps.
    for name in ("SIGINT", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    try:
        while os.read(0, 4096):  # nothing is ever written: EOF is the supervisor gone
            pass
    except OSError:
        pass
    sweep(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
