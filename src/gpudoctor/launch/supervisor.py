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
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gpudoctor.core.codec import decode, encode
from gpudoctor.core.user_file import FileRefused, read_json, read_tail
from gpudoctor.launch import lifeline, rundir, scratch, store
from gpudoctor.launch.contract import RankError, read_contract, write_config
from gpudoctor.launch.threads import set_rank_threads, threads_data
from gpudoctor.launch.rank import PRE_JOIN_STAGES, STARTING_STAGES, STARTUP_LIMIT_S, parse_faults, read_progress

# The supervisor looks at the ranks every POLL_S while something happens (a rank
# enters a new stage, writes a line), backing off to POLL_MAX_S while nothing does
# or the ranks only step on (training heartbeats): every wake-up takes a core from
# a rank, and ranks in lockstep wait for the slowest. A rank that exits wakes it
# at once (pidfd), whatever the interval.
POLL_S = 0.05
POLL_MAX_S = 0.25
PEER_GRACE_S = 3.0  # after a rank fails, how long its peers get to fail on their own
TERM_GRACE_S = 3.0  # after SIGTERM, how long before SIGKILL
KILL_WAIT_S = 10.0  # after SIGKILL, how long to wait for the kernel to reap a rank
STACK_DUMP_S = 0.5  # after SIGUSR1, how long a hung rank gets to print its stacks
TAIL_LINES = 20

ProgressCallback = Callable[[int, str, int], None]


@dataclass(frozen=True)
class RankOutcome:
    rank: int
    # The launcher's own process state: ok | exited | signaled | raised | hung | nojoin | starting |
    # stopped | diagnosed | interrupted. Internal: reports say hang/verdict.STATES instead.
    state: str
    exitcode: int | None
    signal: str | None
    last_stage: str
    step: int
    error: RankError | None
    stderr_tail: tuple[str, ...]
    stderr_path: str
    result: Any  # the rank function's return value, as launch_function's result_type; None if none
    ended_s: float | None  # seconds after start when the process ended by itself
    threads: int | None = None  # torch.get_num_threads() as the rank reported it (rundir.write_threads)


# How a rank can be when the watchdog fires: hung after it joined, never came to the
# rendezvous, or still starting (the machine too busy to import torch in time).
STUCK_STATES = ("hung", "nojoin", "starting")


@dataclass(frozen=True)
class LaunchResult:
    ranks: tuple[RankOutcome, ...]
    timed_out: bool
    interrupted: bool
    elapsed_s: float
    run_dir: str
    timeout_s: float = 0.0
    faults: dict[int, str] = field(default_factory=dict)  # rundir.FAULT_ENV as the ranks saw it
    stop_signal: int = 0  # the signal that interrupted the run (SIGINT, SIGTERM, SIGHUP); 0 if none
    diagnosed: str = ""  # why the collective watch stopped the job ("mismatch", "uneven", "stall")
    output_closed: bool = False  # echo mode: our stdout's reader went away (`| head -1`): the ranks were stopped
    startup_s: float = 0.0  # with startup_grace: the start-up the watchdog did not count
    stalled_s: float = 0.0  # diagnosed "stall": how long the ranks had made no collective progress
    # When a watchdog stopped the job: the ranks' completed work (collectives and heartbeat
    # steps, summed), how long before it fired that last grew (-1: never), and the window
    # within which that counts as still moving (hang/watch.py). 0/-1/0 without a watch.
    progress_done: int = 0
    progress_quiet_s: float = -1.0
    progress_window_s: float = 0.0
    store_port: int = 0  # the MASTER_PORT the launcher gave the ranks (its store's, or rank 0's to bind)
    omp_threads: str = ""  # the OMP_NUM_THREADS the ranks ran with ("" unset)
    omp_set_by: str = ""  # who set it: launch/threads.py BY_GPUDOCTOR or BY_USER ("" nobody)

    def threads(self) -> dict:
        """The JSON `threads` object: OMP_NUM_THREADS, who set it, torch threads per rank."""
        return threads_data(self.omp_threads, self.omp_set_by, [r.threads for r in self.ranks])

    @property
    def ok(self) -> bool:
        return not self.timed_out and not self.interrupted and all(r.state == "ok" for r in self.ranks)

    @property
    def still_progressing(self) -> bool:
        """The --timeout watchdog fired while the ranks were still completing work:
        the job ran out of time, it did not hang."""
        return (
            self.timed_out
            and not self.diagnosed
            and self.progress_done > 0
            and 0.0 <= self.progress_quiet_s <= self.progress_window_s
        )

    def quiet_s(self) -> float:
        """How long the ranks had done nothing when the --timeout watchdog fired (their
        last activity, hang/watch.py), else the whole timeout: the stall's 'no progress for'."""
        return self.progress_quiet_s if self.progress_quiet_s >= 0 else self.timeout_s

    @property
    def results(self) -> list[Any]:
        return [r.result for r in self.ranks]


# SIGHUP is what an ssh session dropping sends: the ranks must not outlive it either.
# (SIGINT arrives as KeyboardInterrupt.)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))  # no SIGHUP on Windows


class _Terminated(Exception):
    """SIGTERM or SIGHUP reached the supervisor."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _ignore(signum, frame) -> None:
    """After the first stop signal: a second or third Ctrl-C must not cut the
    clean-up, or the report after it, short. A Python handler rather than
    SIG_IGN, which later children would inherit through exec."""


def _tail(path: str, lines: int = TAIL_LINES) -> tuple[str, ...]:
    try:
        data, _ = read_tail(path, 16384)
    except (OSError, ValueError):  # FileRefused is a ValueError
        return ()
    return tuple(data.decode("utf-8", "replace").splitlines()[-lines:])


# What the supervisor does to a rank and everything it started (DataLoader workers, ...).
TERM, KILL, DUMP_STACKS = "term", "kill", "dump-stacks"


def _signal_group(proc: subprocess.Popen, action: str, platform: str = sys.platform) -> None:
    """POSIX: a signal to the rank's process group. Windows has no process groups
    to signal, no SIGKILL and no SIGUSR1: terminate the rank's process tree (found
    with psutil), and no stack dump."""
    if platform != "win32":
        sig = {TERM: signal.SIGTERM, KILL: signal.SIGKILL, DUMP_STACKS: signal.SIGUSR1}[action]
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        return
    if action == DUMP_STACKS or proc.poll() is not None:
        return  # a reaped rank's pid may already be someone else's
    import psutil

    try:
        root = psutil.Process(proc.pid)
        tree = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for process in tree:
        try:
            process.terminate() if action == TERM else process.kill()
        except psutil.Error:
            pass


EchoCallback = Callable[[int, str], None]


class _Echo:
    """Hands each rank's new stderr lines, as they come, to the caller (for `run`).
    Read in chunks of ECHO_CHUNK, a line cut at ECHO_LINE: a rank that writes a GB
    of stderr costs the supervisor a chunk of memory, not the GB."""

    ECHO_CHUNK = 1 << 20
    ECHO_LINE = 64 << 10

    def __init__(self, paths: list[str], on_line: EchoCallback):
        self.paths = paths
        self.offsets = [0] * len(paths)
        self.partial = [b""] * len(paths)
        self.on_line = on_line

    def pump(self, final: bool = False) -> bool:
        """True when there was something new."""
        moved = False
        for rank, path in enumerate(self.paths):
            try:
                with open(path, "rb") as fh:  # the supervisor's own file, made by it in its private run folder
                    fh.seek(self.offsets[rank])
                    while chunk := fh.read(self.ECHO_CHUNK):
                        self.offsets[rank] += len(chunk)
                        moved = True
                        self._lines(rank, self.partial[rank] + chunk)
            except OSError:
                continue
            if final and self.partial[rank]:
                self.on_line(rank, self.partial[rank].decode("utf-8", "replace"))
                self.partial[rank] = b""
        return moved

    def _lines(self, rank: int, data: bytes) -> None:
        *lines, rest = data.split(b"\n")
        if len(rest) > self.ECHO_LINE:  # a line without end (a progress bar's \r): shown in pieces
            lines.append(rest)
            rest = b""
        self.partial[rank] = rest
        for line in lines:
            self.on_line(rank, line[: self.ECHO_LINE].decode("utf-8", "replace"))


def launch(
    command: list[str],
    nproc: int,
    *,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    echo: EchoCallback | None = None,
    on_progress: ProgressCallback | None = None,
    run_dir: str | None = None,
    watch=None,
    own_store: bool = False,
    startup_grace: bool = False,
) -> LaunchResult:
    """Run `command` as ranks 0..nproc-1 on this machine and supervise them.

    `startup_grace`: `timeout` counts from when every rank has started (up to
    STARTUP_LIMIT_S of start-up not counted), not from now.
    `own_store`: the command is gpudoctor's rank entry (launch.child,
    runtime.main), whose rank 0 hosts the rendezvous store on a socket bound to
    127.0.0.1 here (launch/store.py); otherwise rank 0's torch binds the port.

    `echo(rank, line)`: when given, the ranks' stdout goes straight to ours and
    each line of their stderr is handed to it as it is written.
    `watch`: a CollectiveWatch that lines the ranks' collectives up as they run
    and says when to stop the job (a mismatch, uneven work, a stall)."""
    if nproc < 1:
        raise ValueError("nproc must be >= 1")
    run_dir = run_dir or tempfile.mkdtemp(prefix="gpudoctor-")
    base_env = dict(os.environ)
    base_env.update(env or {})
    base_env.update(store.rank_env())
    # One CPU thread per rank unless the user chose (as torchrun does): N ranks of
    # all-core torch each would measure their own contention, not the job.
    omp_threads, omp_set_by = set_rank_threads(base_env, nproc)
    if own_store:
        # Rank 0 hosts the store on this socket, bound to 127.0.0.1 here (launch/store.py).
        held = store.listen_loopback()
        listener: socket.socket | None = held
        port = held.getsockname()[1]
    else:  # rank 0's torch binds it, as env:// does
        listener, port = None, store.free_port()
        base_env.pop("TORCHELASTIC_USE_AGENT_STORE", None)
    base_env.update(
        MASTER_PORT=str(port),
        WORLD_SIZE=str(nproc),
        LOCAL_WORLD_SIZE=str(nproc),
        GROUP_RANK="0",
        TORCHELASTIC_RESTART_COUNT="0",
        PYTHONUNBUFFERED="1",
    )
    base_env[rundir.RUN_DIR_ENV] = run_dir
    stderr_paths = [rundir.stderr_path(run_dir, r) for r in range(nproc)]
    procs: list[subprocess.Popen] = []
    start = time.monotonic()
    ended: dict[int, float] = {}
    killed_as: dict[int, str] = {}
    seen: dict[int, tuple[int, str]] = {}
    timed_out = interrupted = output_closed = False
    deadline, forgiven = timeout, 0.0
    stop_signal = 0
    diagnosed = ""
    progress_done, progress_quiet, progress_window = 0, -1.0, 0.0
    echoer = _Echo(stderr_paths, echo) if echo else None
    exits: _Exits | None = None

    def on_stop(signum, frame):
        raise _Terminated(signum)

    in_main_thread = _in_main_thread()
    old_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *STOP_SIGNALS)}
    if in_main_thread:
        for sig in STOP_SIGNALS:
            signal.signal(sig, on_stop)
    child_setup = lifeline.child_setup(os.getpid(), own_group=sys.version_info < (3, 11))
    try:
        for rank in range(nproc):
            rank_env = dict(base_env, RANK=str(rank), LOCAL_RANK=str(rank))
            if rank == 0 and listener is not None:
                rank_env[store.STORE_FD_ENV] = str(listener.fileno())
            with open(stderr_paths[rank], "wb") as err, open(rundir.stdout_path(run_dir, rank), "wb") as out:
                procs.append(
                    subprocess.Popen(
                        command,
                        env=rank_env,
                        stdin=subprocess.DEVNULL,
                        stdout=None if echo else out,
                        stderr=err,
                        # Dies with us even when we are SIGKILLed (launch/lifeline.py).
                        preexec_fn=child_setup if sys.platform != "win32" else None,
                        # Own process group: a terminal's Ctrl-C reaches only us, and we can
                        # signal each rank's whole process group (its DataLoader workers too).
                        # Not its own session: on Linux a session is also a scheduler
                        # autogroup, and on a busy machine ranks in separate autogroups
                        # run their lockstep DDP steps ~20% slower (benchmarks/train_smoke_vs_bare.py).
                        **_own_process_group(),
                        pass_fds=(listener.fileno(),) if rank == 0 and listener is not None else (),
                    )
                )
            if rank == 0 and listener is not None:
                listener.close()  # rank 0 holds it now
        first_failure: float | None = None
        exits = _Exits(procs)
        interval = POLL_S
        startup = _Startup(run_dir, nproc) if startup_grace else None
        while True:
            now = time.monotonic() - start
            if startup is not None:
                forgiven = startup.seconds(now, ended)
                deadline = timeout + forgiven
            moved = False
            for rank, proc in enumerate(procs):
                if rank not in ended and proc.poll() is not None:
                    ended[rank] = now
                    moved = True
                    if proc.returncode != 0 and first_failure is None:
                        first_failure = now
            if on_progress:
                for rank in range(nproc):
                    beat = read_progress(run_dir, rank)
                    if beat != seen.get(rank):
                        # A new stage is news; a step further in the same one (a training
                        # heartbeat) is shown without speeding the polls up again.
                        moved = moved or beat[1] != seen.get(rank, (0, ""))[1]
                        seen[rank] = beat
                        on_progress(rank, beat[1], beat[0])
            if echoer and _stdout_gone():
                # `run --nproc 2 ... | head -1`: the reader left, as a CLI's pipe does. The ranks
                # writing there fail on it (EPIPE); that is not the job's failure, nor worth a word.
                output_closed = True
                _teardown(procs, ended, killed_as, "stopped")
                break
            if echoer:
                moved = echoer.pump() or moved
            if len(ended) == nproc:
                break
            if watch is not None:
                diagnosed = watch.tick(now, {r: procs[r].returncode for r in ended}) or ""
                if diagnosed:
                    _teardown(procs, ended, killed_as, "diagnosed")
                    break
            if first_failure is not None and now - first_failure > PEER_GRACE_S:
                _teardown(procs, ended, killed_as, "stopped")
                break
            if now > deadline:
                timed_out = True
                if watch is not None and hasattr(watch, "progress_at_stop"):
                    progress_done, progress_quiet = watch.progress_at_stop(now)
                    progress_window = watch.moving_window()
                for rank, proc in enumerate(procs):
                    if rank in ended:
                        continue
                    # Marked first: a rank that dies of the dump request (too early in its start
                    # to have a handler for it) was still stopped by the watchdog, not crashed.
                    killed_as[rank] = "timeout"
                    if read_progress(run_dir, rank)[1]:  # "": no handler yet, SIGUSR1 would kill it
                        _signal_group(proc, DUMP_STACKS)
                time.sleep(STACK_DUMP_S)
                _teardown(procs, ended, killed_as, "timeout")
                break
            interval = POLL_S if moved else min(POLL_MAX_S, interval * 2)
            exits.wait([p for r, p in enumerate(procs) if r not in ended], min(interval, max(0.0, deadline - now)))
    except (KeyboardInterrupt, _Terminated) as stop:
        if in_main_thread:
            for sig in old_handlers:
                signal.signal(sig, _ignore)
        interrupted = True
        stop_signal = stop.signum if isinstance(stop, _Terminated) else int(signal.SIGINT)
        _teardown(procs, ended, killed_as, "interrupted")
    finally:
        if listener is not None:
            listener.close()
        # Whatever happened above, every rank's process group is gone when we return.
        for proc in procs:
            if proc.poll() is None:
                _signal_group(proc, KILL)
                _reap(proc)
            _signal_group(proc, KILL)  # stragglers of a rank that exited
        # Once stopped by a signal the process is on its way out: the handlers stay
        # ignoring until the caller has printed its report and exited.
        if in_main_thread and not interrupted:
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
        if echoer and not output_closed:
            echoer.pump(final=True)
        if exits is not None:
            exits.close()
    outcomes = tuple(
        _outcome(rank, procs[rank], run_dir, stderr_paths[rank], ended.get(rank), killed_as.get(rank))
        for rank in range(len(procs))
    )
    faults = parse_faults(base_env.get(rundir.FAULT_ENV))
    elapsed = time.monotonic() - start
    stalled = float(getattr(watch, "stalled_s", 0.0) or 0.0) if diagnosed else 0.0
    result = LaunchResult(
        outcomes, timed_out, interrupted, elapsed, run_dir, timeout, faults, stop_signal, diagnosed, output_closed,
        forgiven, stalled, progress_done, progress_quiet, progress_window, port, omp_threads, omp_set_by,
    )
    write_outcome(result)
    return result


def write_outcome(result: LaunchResult) -> None:
    """How the job ended, kept in its run folder (outcome.json) for `gpudoctor
    diagnose DIR`: the same LaunchResult the live report was made from, without the
    ranks' return values (the command's own data, not how the job ended). A
    courtesy: a full disk or a folder already gone costs only this file."""
    kept = replace(result, ranks=tuple(replace(r, result=None) for r in result.ranks))
    try:
        scratch.write_file(rundir.outcome_path(result.run_dir), json.dumps(encode(kept), default=str))
    except OSError:
        pass


class OutcomeUnreadable(ValueError):
    """outcome.json is there but cannot be read (not a regular file, too large, not
    JSON, nested too deeply); `str()` says which, for the list of what was not read."""


def read_outcome(run_dir: str) -> LaunchResult | None:
    """The outcome.json of a run folder, as the LaunchResult it was, its paths
    re-rooted at `run_dir` (a folder moved or copied elsewhere still reads); None
    when there is none, or it is not one this gpudoctor wrote."""
    try:
        kept = decode(LaunchResult, read_json(rundir.outcome_path(run_dir)), rundir.OUTCOME_FILE)
    except FileRefused as exc:
        if exc.kind == "missing":
            return None
        raise OutcomeUnreadable(f"{rundir.OUTCOME_FILE}: {exc.reason}") from None
    except (OSError, ValueError, RecursionError):  # SnapshotError is a ValueError: another gpudoctor's file
        return None
    if not isinstance(kept, LaunchResult):
        return None
    ranks = tuple(replace(r, stderr_path=rundir.stderr_path(run_dir, r.rank)) for r in kept.ranks)
    return replace(kept, ranks=ranks, run_dir=run_dir)


def _stdout_gone() -> bool:
    """Whether our stdout is a pipe whose reader has gone (poll says POLLERR on
    the writing end then); never blocks."""
    if not hasattr(select, "poll"):
        return False
    try:
        import stat

        if not stat.S_ISFIFO(os.fstat(1).st_mode):  # a terminal that hung up is SIGHUP's to report
            return False
        poller = select.poll()
        poller.register(1, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError):
        return False


class _Startup:
    """How long the ranks took to start (every one past STARTING_STAGES, or ended),
    as far as the watchdog forgives it."""

    def __init__(self, run_dir: str, nproc: int):
        self.run_dir, self.nproc = run_dir, nproc
        self.done_at: float | None = None

    def seconds(self, now: float, ended: dict[int, float]) -> float:
        if self.done_at is None and all(
            r in ended or read_progress(self.run_dir, r)[1] not in STARTING_STAGES for r in range(self.nproc)
        ):
            self.done_at = now
        return min(self.done_at if self.done_at is not None else now, STARTUP_LIMIT_S)


class _Exits:
    """Sleep until a timeout or until one of the ranks exits, whichever comes first
    (a pidfd per rank becomes readable when it exits; Linux >= 5.3). Elsewhere: sleep."""

    def __init__(self, procs: list[subprocess.Popen]):
        self.fds: dict[int, int] = {}
        for proc in procs:
            try:
                self.fds[proc.pid] = os.pidfd_open(proc.pid)
            except (AttributeError, OSError):  # no pidfd here: plain sleeps
                self.close()
                break

    def wait(self, live: list[subprocess.Popen], seconds: float) -> None:
        fds = [self.fds[p.pid] for p in live if p.pid in self.fds]
        if not fds or len(fds) != len(live):
            time.sleep(seconds)
            return
        select.select(fds, [], [], seconds)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def _own_process_group() -> dict:
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {}  # Python 3.10: lifeline.child_setup calls setpgid itself


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _teardown(procs, ended, killed_as, reason: str) -> None:
    live = [(r, p) for r, p in enumerate(procs) if r not in ended and p.poll() is None]
    for rank, proc in live:
        killed_as[rank] = reason
        _signal_group(proc, TERM)
    deadline = time.monotonic() + TERM_GRACE_S
    for rank, proc in live:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(proc, KILL)
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
    error = read_contract(RankError, rundir.error_path(run_dir, rank))
    sig = signal.Signals(-rc).name if rc is not None and rc < 0 and -rc in signal.Signals._value2member_map_ else None
    if killed_as == "timeout" and error:
        # It raised, then was slow to leave (a backend's teardown, a busy machine):
        # its exception is the cause, not a hang.
        state = "raised"
    elif killed_as == "timeout":
        state = "starting" if stage in STARTING_STAGES else "nojoin" if stage in PRE_JOIN_STAGES else "hung"
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
        result=None,  # launch_function reads it: only its ranks leave one
        ended_s=ended_s,
        threads=rundir.read_threads(run_dir, rank),
    )


def launch_function(
    target: str,
    config: Any,
    nproc: int,
    *,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    on_progress: ProgressCallback | None = None,
    run_dir: str | None = None,
    watch_factory=None,
    result_type: type | None = None,
    rank_setup: str = "",
) -> LaunchResult:
    """Run `fn(ctx, config)` (target "package.module:function") on every rank.
    `config`: the rank's options, a frozen dataclass each rank gets back as it is
    (launch/contract.write_config; a test's tiny function may take a plain dict).
    `run_dir`: an existing empty folder for the run's files (default: a new temp one),
    for a caller that reads what ranks write there while they run.
    `watch_factory(run_dir, nproc)`: the collective watch to run beside the ranks.
    `result_type`: the frozen dataclass fn returns; each rank's `result` is read
    back as it (None where the rank returned nothing, or something else).
    `rank_setup`: "module:function" each rank calls with its context before it imports torch."""
    run_dir = run_dir or tempfile.mkdtemp(prefix="gpudoctor-")
    config_type = write_config(rundir.config_path(run_dir), config)  # the typed options, through the codec
    command = [sys.executable, "-m", "gpudoctor.launch.child", target, rank_setup, config_type]
    watch = watch_factory(run_dir, nproc) if watch_factory else None
    result = launch(
        command, nproc, timeout=timeout, env=env, on_progress=on_progress, run_dir=run_dir, watch=watch, own_store=True,
        startup_grace=True,
    )
    if result_type is None:
        return result
    ranks = tuple(
        replace(r, result=read_contract(result_type, rundir.result_path(result.run_dir, r.rank)))
        for r in result.ranks
    )
    return replace(result, ranks=ranks)


def discard_run_dir(result: LaunchResult) -> None:
    """Remove the logs of a run that needs none of them kept."""
    shutil.rmtree(result.run_dir, ignore_errors=True)
