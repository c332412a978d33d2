"""The one supervised launcher: N ranks on this machine, watched until they all
succeed, one fails, the watchdog fires, or the user interrupts — and in every
case no child process is left behind.

The supervisor hosts the rendezvous TCPStore itself on a port the OS picks (as
torchrun's agent does), so two runs on one host never collide on a port and a
plain `init_process_group()` in a rank works unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gpudoctor.launch.rank import FAULT_ENV, PRE_JOIN_STAGES, parse_faults, read_progress

POLL_S = 0.05
PEER_GRACE_S = 3.0  # after a rank fails, how long its peers get to fail on their own
TERM_GRACE_S = 3.0  # after SIGTERM, how long before SIGKILL
KILL_WAIT_S = 10.0  # after SIGKILL, how long to wait for the kernel to reap a rank
STACK_DUMP_S = 0.5  # after SIGUSR1, how long a hung rank gets to print its stacks
TAIL_LINES = 20
# How gloo/NCCL/TCPStore word "the other side went away".
PEER_LOSS = ("connection closed by peer", "connection reset by peer", "broken pipe", "connection refused")

ProgressCallback = Callable[[int, str, int], None]


@dataclass(frozen=True)
class RankOutcome:
    rank: int
    state: str  # ok | exited | signaled | raised | hung | nojoin | stopped | interrupted
    exitcode: int | None
    signal: str | None
    last_stage: str
    step: int
    error: dict | None
    stderr_tail: tuple[str, ...]
    stderr_path: str
    result: dict | None
    ended_s: float | None  # seconds after start when the process ended by itself

    @property
    def lost_peer(self) -> bool:
        """Did this rank fail only because a peer went away mid-collective?"""
        text = " ".join([(self.error or {}).get("message", ""), *self.stderr_tail[-5:]]).lower()
        return any(p in text for p in PEER_LOSS)


@dataclass(frozen=True)
class LaunchResult:
    ranks: tuple[RankOutcome, ...]
    timed_out: bool
    interrupted: bool
    elapsed_s: float
    run_dir: str
    timeout_s: float = 0.0
    faults: dict[int, str] = field(default_factory=dict)  # GPUDOCTOR_FAULT as the ranks saw it

    @property
    def ok(self) -> bool:
        return not self.timed_out and not self.interrupted and all(r.state == "ok" for r in self.ranks)

    @property
    def results(self) -> list[dict | None]:
        return [r.result for r in self.ranks]

    @property
    def root_cause(self) -> RankOutcome | None:
        """The rank the others failed because of: the earliest to die on its own
        (a rank that only lost its peer's connection is a victim, not a cause);
        failing that, a rank that never joined, then the rank furthest behind
        among the hung ones (the one its peers are waiting for)."""
        own = [r for r in self.ranks if r.state in ("exited", "signaled", "raised")]
        causes = [r for r in own if not r.lost_peer] or own
        if causes:
            return min(causes, key=lambda r: (r.ended_s if r.ended_s is not None else float("inf"), r.lost_peer, r.rank))
        stuck = [r for r in self.ranks if r.state in ("hung", "nojoin")]
        if stuck:
            return min(stuck, key=lambda r: (r.state != "nojoin", r.step, r.rank))
        return None


def free_store(world_size: int):
    """A TCPStore on 127.0.0.1 on a port the OS chose; it lives as long as the object."""
    from datetime import timedelta

    from torch.distributed import TCPStore

    return TCPStore("127.0.0.1", 0, world_size, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=60))


class _Terminated(Exception):
    """SIGTERM reached the supervisor."""


def _tail(path: str, lines: int = TAIL_LINES) -> tuple[str, ...]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ()
    return tuple(text.splitlines()[-lines:])


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _read_json(path: str) -> dict | None:
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


EchoCallback = Callable[[int, str], None]


class _Echo:
    """Hands each rank's new stderr lines, as they come, to the caller (for `run`)."""

    def __init__(self, paths: list[str], on_line: EchoCallback):
        self.paths = paths
        self.offsets = [0] * len(paths)
        self.partial = [""] * len(paths)
        self.on_line = on_line

    def pump(self, final: bool = False) -> None:
        for rank, path in enumerate(self.paths):
            try:
                with open(path, "rb") as fh:
                    fh.seek(self.offsets[rank])
                    chunk = fh.read()
                    self.offsets[rank] = fh.tell()
            except OSError:
                continue
            text = self.partial[rank] + chunk.decode("utf-8", "replace")
            lines = text.split("\n")
            self.partial[rank] = "" if final else lines.pop()
            for line in lines:
                if final and not line:
                    continue
                self.on_line(rank, line)


def launch(
    command: list[str],
    nproc: int,
    *,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    echo: EchoCallback | None = None,
    on_progress: ProgressCallback | None = None,
    run_dir: str | None = None,
) -> LaunchResult:
    """Run `command` as ranks 0..nproc-1 on this machine and supervise them.

    `echo(rank, line)`: when given, the ranks' stdout goes straight to ours and
    each line of their stderr is handed to it as it is written."""
    if nproc < 1:
        raise ValueError("nproc must be >= 1")
    run_dir = run_dir or tempfile.mkdtemp(prefix="gpudoctor-")
    store = free_store(nproc)
    base_env = dict(os.environ)
    base_env.update(env or {})
    base_env.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(store.port),
        WORLD_SIZE=str(nproc),
        LOCAL_WORLD_SIZE=str(nproc),
        GROUP_RANK="0",
        TORCHELASTIC_USE_AGENT_STORE="True",
        TORCHELASTIC_RESTART_COUNT="0",
        GPUDOCTOR_RUN_DIR=run_dir,
        PYTHONUNBUFFERED="1",
    )
    stderr_paths = [os.path.join(run_dir, f"rank{r}.stderr") for r in range(nproc)]
    procs: list[subprocess.Popen] = []
    start = time.monotonic()
    ended: dict[int, float] = {}
    killed_as: dict[int, str] = {}
    seen: dict[int, tuple[int, str]] = {}
    timed_out = interrupted = False
    echoer = _Echo(stderr_paths, echo) if echo else None

    def on_sigterm(signum, frame):
        raise _Terminated()

    old_term = signal.getsignal(signal.SIGTERM)
    in_main_thread = _in_main_thread()
    if in_main_thread:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        for rank in range(nproc):
            rank_env = dict(base_env, RANK=str(rank), LOCAL_RANK=str(rank))
            with open(stderr_paths[rank], "wb") as err, open(os.path.join(run_dir, f"rank{rank}.stdout"), "wb") as out:
                procs.append(
                    subprocess.Popen(
                        command,
                        env=rank_env,
                        stdin=subprocess.DEVNULL,
                        stdout=None if echo else out,
                        stderr=err,
                        # Own process group: a terminal's Ctrl-C reaches only us, and we can
                        # signal each rank's whole process group (its DataLoader workers too).
                        # Not its own session: on Linux a session is also a scheduler
                        # autogroup, and on a busy machine ranks in separate autogroups
                        # run their lockstep DDP steps ~20% slower (benchmarks/train_smoke_vs_bare.py).
                        **_own_process_group(),
                    )
                )
        first_failure: float | None = None
        while True:
            now = time.monotonic() - start
            for rank, proc in enumerate(procs):
                if rank not in ended and proc.poll() is not None:
                    ended[rank] = now
                    if proc.returncode != 0 and first_failure is None:
                        first_failure = now
            if on_progress:
                for rank in range(nproc):
                    beat = read_progress(run_dir, rank)
                    if beat != seen.get(rank):
                        seen[rank] = beat
                        on_progress(rank, beat[1], beat[0])
            if echoer:
                echoer.pump()
            if len(ended) == nproc:
                break
            if first_failure is not None and now - first_failure > PEER_GRACE_S:
                _teardown(procs, ended, killed_as, "stopped")
                break
            if now > timeout:
                timed_out = True
                live = [p for r, p in enumerate(procs) if r not in ended]
                for proc in live:
                    _signal_group(proc, signal.SIGUSR1)
                time.sleep(STACK_DUMP_S)
                _teardown(procs, ended, killed_as, "timeout")
                break
            time.sleep(POLL_S)
    except (KeyboardInterrupt, _Terminated):
        interrupted = True
        _teardown(procs, ended, killed_as, "interrupted")
    finally:
        # Whatever happened above, every rank's process group is gone when we return.
        for proc in procs:
            if proc.poll() is None:
                _signal_group(proc, signal.SIGKILL)
                _reap(proc)
            _signal_group(proc, signal.SIGKILL)  # stragglers of a rank that exited
        if in_main_thread:
            signal.signal(signal.SIGTERM, old_term)
        if echoer:
            echoer.pump(final=True)
        del store
    outcomes = tuple(
        _outcome(rank, procs[rank], run_dir, stderr_paths[rank], ended.get(rank), killed_as.get(rank))
        for rank in range(len(procs))
    )
    faults = parse_faults(base_env.get(FAULT_ENV))
    return LaunchResult(outcomes, timed_out, interrupted, time.monotonic() - start, run_dir, timeout, faults)


def _own_process_group() -> dict:
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}  # Python 3.10


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _teardown(procs, ended, killed_as, reason: str) -> None:
    live = [(r, p) for r, p in enumerate(procs) if r not in ended and p.poll() is None]
    for rank, proc in live:
        killed_as[rank] = reason
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_S
    for rank, proc in live:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            _reap(proc)


def _reap(proc: subprocess.Popen) -> None:
    """Wait for a SIGKILLed rank, but not forever: a process stuck in the GPU
    driver (uninterruptible sleep) cannot die until the driver lets it go."""
    try:
        proc.wait(timeout=KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        pass


def _outcome(rank, proc, run_dir, stderr_path, ended_s, killed_as) -> RankOutcome:
    rc = proc.returncode
    step, stage = read_progress(run_dir, rank)
    error = _read_json(os.path.join(run_dir, f"rank{rank}.error.json"))
    result = _read_json(os.path.join(run_dir, f"rank{rank}.result.json"))
    sig = signal.Signals(-rc).name if rc is not None and rc < 0 and -rc in signal.Signals._value2member_map_ else None
    if killed_as == "timeout":
        state = "nojoin" if stage in PRE_JOIN_STAGES else "hung"
    elif killed_as:
        state = killed_as
    elif rc == 0:
        state = "ok"
    elif error:
        state = "raised"
    elif rc is not None and rc < 0:
        state = "signaled"
    else:
        state = "exited"
    return RankOutcome(
        rank=rank,
        state=state,
        exitcode=rc,
        signal=sig,
        last_stage=stage,
        step=step,
        error=error,
        stderr_tail=_tail(stderr_path),
        stderr_path=stderr_path,
        result=result,
        ended_s=ended_s,
    )


def launch_function(
    target: str,
    config: dict,
    nproc: int,
    *,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    on_progress: ProgressCallback | None = None,
    run_dir: str | None = None,
) -> LaunchResult:
    """Run `fn(ctx, config)` (target "package.module:function") on every rank.
    `run_dir`: an existing empty folder for the run's files (default: a new temp one),
    for a caller that reads what ranks write there while they run."""
    run_dir = run_dir or tempfile.mkdtemp(prefix="gpudoctor-")
    with open(os.path.join(run_dir, "config.json"), "w") as fh:
        json.dump(config, fh)
    command = [sys.executable, "-m", "gpudoctor.launch.child", target]
    return launch(command, nproc, timeout=timeout, env=env, on_progress=on_progress, run_dir=run_dir)


def discard_run_dir(result: LaunchResult) -> None:
    """Remove the logs of a run that needs none of them kept."""
    shutil.rmtree(result.run_dir, ignore_errors=True)
