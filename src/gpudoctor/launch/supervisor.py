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
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from gpudoctor.core.codec import decode, encode
from gpudoctor.core.user_file import FileRefused, read_json, read_tail
from gpudoctor.launch import lifeline, rundir, scratch, store, sweep
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
SWEEP_WAIT_S = 5.0  # how long the job's sweep (launch/sweep.py) may take before its sweeper is killed
TAIL_LINES = 20

ProgressCallback = Callable[[int, str, int], None]


class ProcessState(str, Enum):
    """How the launcher saw one rank's process end (RankOutcome.state, kept in
    outcome.json). The launcher's own words: reports say each rank's state in the
    verdict's vocabulary instead (hang/verdict.py RankVerdict). Every state is final:

        started --exit 0 ------------------------------------------> OK
           |------exit != 0, its error file written ----------------> RAISED
           |------exit != 0, no error file -------------------------> EXITED
           |------killed by a signal gpudoctor did not send --------> SIGNALED
           `------stopped by the supervisor (signal, deadline, SIGKILL), because
                    the --timeout watchdog fired -------------------> HUNG (past the rendezvous)
                                                                      NOJOIN (before it)
                                                                      STARTING (Python, import torch)
                                                                      RAISED (its error written: slow to leave)
                    a peer failed, or our stdout's reader left -----> STOPPED
                    the collective watch found a problem -----------> DIAGNOSED
                    Ctrl-C, SIGTERM or SIGHUP reached the supervisor -> INTERRUPTED

    A str: its value is the word outcome.json has always held, in text as in JSON."""

    OK = "ok"
    EXITED = "exited"
    SIGNALED = "signaled"
    RAISED = "raised"
    HUNG = "hung"
    NOJOIN = "nojoin"
    STARTING = "starting"
    STOPPED = "stopped"
    DIAGNOSED = "diagnosed"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:  # the word, in text as in JSON
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    def failed_on_own(self) -> bool:
        """It ended by itself, with an error (not stopped by gpudoctor)."""
        return self in _FAILED_ON_OWN

    def ended_on_own(self) -> bool:
        """It ended by itself, well or badly: its exit code is its own."""
        return self is ProcessState.OK or self in _FAILED_ON_OWN

    def stuck(self) -> bool:
        """How a rank can be when the watchdog fires: hung after it joined, never came to
        the rendezvous, or still starting (the machine too busy to import torch in time)."""
        return self in _STUCK

    def stopped_by_us(self) -> bool:
        """Stopped by gpudoctor because of another rank or the collective watch."""
        return self in (ProcessState.STOPPED, ProcessState.DIAGNOSED)


_FAILED_ON_OWN = (ProcessState.EXITED, ProcessState.SIGNALED, ProcessState.RAISED)
_STUCK = (ProcessState.HUNG, ProcessState.NOJOIN, ProcessState.STARTING)


@dataclass(frozen=True)
class RankOutcome:
    rank: int
    state: ProcessState  # a plain word is read as its ProcessState
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", ProcessState(self.state))


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
        return not self.timed_out and not self.interrupted and all(r.state is ProcessState.OK for r in self.ranks)

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
    job = _Job(command, nproc, run_dir or tempfile.mkdtemp(prefix="gpudoctor-"), env, own_store, timeout)
    job.echoer = _Echo(job.stderr_paths, echo) if echo else None
    job.on_progress, job.watch = on_progress, watch
    try:
        job.start(startup_grace)
        job.wait()
    except (KeyboardInterrupt, _Terminated) as stop:
        job.interrupt(stop.signum if isinstance(stop, _Terminated) else int(signal.SIGINT))
    finally:
        job.close()
    result = job.result()
    write_outcome(result)
    return result


# Why wait() ended the job (_Job._poll's answer).
ALL_ENDED, OUTPUT_CLOSED, DIAGNOSED, PEER_FAILED, TIMED_OUT = "all-ended", "output-closed", "diagnosed", "peer-failed", "timed-out"


class _Job:
    """One supervised job, in the shape of torch elastic's PContext: start() registers
    the stop signals and starts the ranks; wait() loops over _poll(), which says the
    job is over only when every rank has ended, or one failed (after PEER_GRACE_S),
    the collective watch or the watchdog fired, or our stdout's reader left; then
    _terminate() stops the ranks still running (SIGTERM, TERM_GRACE_S, SIGKILL).
    close() runs whatever happened: no rank, nor anything a rank started, is left."""

    def __init__(self, command: list[str], nproc: int, run_dir: str, env: dict[str, str] | None, own_store: bool, timeout: float):
        self.command, self.nproc, self.run_dir, self.timeout = command, nproc, run_dir, timeout
        self.base_env = dict(os.environ)
        self.base_env.update(env or {})
        self.base_env.update(store.rank_env())
        # One CPU thread per rank unless the user chose (as torchrun does): N ranks of
        # all-core torch each would measure their own contention, not the job.
        self.omp_threads, self.omp_set_by = set_rank_threads(self.base_env, nproc)
        self.listener, self.port = _store_socket(self.base_env, own_store)
        self.base_env.update(_job_env(nproc, self.port, run_dir))
        self.stderr_paths = [rundir.stderr_path(run_dir, r) for r in range(nproc)]
        self.procs: list[subprocess.Popen] = []
        self.started_at = time.monotonic()
        self.ended: dict[int, float] = {}  # rank -> seconds after start when it ended by itself
        self.killed_as: dict[int, str] = {}  # rank -> why gpudoctor stopped it (a ProcessState, or TIMEOUT)
        self.seen: dict[int, tuple[int, str]] = {}  # rank -> the heartbeat last handed to on_progress
        self.first_failure: float | None = None
        self.timed_out = self.interrupted = self.output_closed = False
        self.deadline, self.forgiven = timeout, 0.0
        self.stop_signal = 0
        self.diagnosed = ""
        self.progress: tuple[int, float, float] = (0, -1.0, 0.0)  # done, quiet s, window s (LaunchResult)
        self.echoer: _Echo | None = None
        self.on_progress: ProgressCallback | None = None
        self.watch = None
        self.exits: _Exits | None = None
        self.startup: _Startup | None = None
        self.sweeper: _Sweeper | None = None
        self.in_main_thread = _in_main_thread()
        self.old_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *STOP_SIGNALS)}

    def start(self, startup_grace: bool) -> None:
        """The sweeper, then every rank, with a stop signal held back until each rank
        started is in self.procs; then the stop signals turned into _Terminated (SIGINT
        is a KeyboardInterrupt) and any held back raised."""
        held = _HeldStop.install(self.old_handlers) if self.in_main_thread else None
        try:
            self.sweeper = _Sweeper.start(self.base_env[rundir.JOB_TAG_ENV])
            child_setup = lifeline.child_setup(os.getpid(), own_group=sys.version_info < (3, 11))
            for rank in range(self.nproc):
                self.procs.append(self._start_rank(rank, child_setup))
                if rank == 0 and self.listener is not None:
                    self.listener.close()  # rank 0 holds it now
            self.exits = _Exits(self.procs)
            self.startup = _Startup(self.run_dir, self.nproc) if startup_grace else None
        finally:
            if held is not None:
                held.release()

    def _start_rank(self, rank: int, child_setup: Callable[[], None]) -> subprocess.Popen:
        rank_env = dict(self.base_env, RANK=str(rank), LOCAL_RANK=str(rank))
        held = self.listener if rank == 0 else None
        if held is not None:
            rank_env[store.STORE_FD_ENV] = str(held.fileno())
        with open(self.stderr_paths[rank], "wb") as err, open(rundir.stdout_path(self.run_dir, rank), "wb") as out:
            return subprocess.Popen(
                self.command,
                env=rank_env,
                stdin=subprocess.DEVNULL,
                stdout=None if self.echoer else out,
                stderr=err,
                # Dies with us even when we are SIGKILLed (launch/lifeline.py).
                preexec_fn=child_setup if sys.platform != "win32" else None,
                # Own process group: a terminal's Ctrl-C reaches only us, and we can
                # signal each rank's whole process group (its DataLoader workers too).
                # Not its own session: on Linux a session is also a scheduler
                # autogroup, and on a busy machine ranks in separate autogroups
                # run their lockstep DDP steps ~20% slower (benchmarks/train_smoke_vs_bare.py).
                **_own_process_group(),
                pass_fds=(held.fileno(),) if held is not None else (),
            )

    def wait(self) -> None:
        """Poll until _poll() says the job is over, then stop what still runs. Bounded:
        _poll() says so at the latest at the deadline (the timeout, plus at most
        STARTUP_LIMIT_S of start-up with startup_grace)."""
        assert self.exits is not None
        interval = POLL_S
        while True:
            now = time.monotonic() - self.started_at
            why, moved = self._poll(now)
            if why is not None:
                self._end(why, now)
                return
            interval = POLL_S if moved else min(POLL_MAX_S, interval * 2)
            live = [p for r, p in enumerate(self.procs) if r not in self.ended]
            self.exits.wait(live, min(interval, max(0.0, self.deadline - now)))

    def _poll(self, now: float) -> tuple[str | None, bool]:
        """(why the job is over, or None; whether anything happened since the last poll)."""
        if self.startup is not None:
            self.forgiven = self.startup.seconds(now, self.ended)
            self.deadline = self.timeout + self.forgiven
        moved = self._note_exits(now)
        moved = self._note_progress() or moved
        if self.echoer and _stdout_gone():
            # `run --nproc 2 ... | head -1`: the reader left, as a CLI's pipe does. The ranks
            # writing there fail on it (EPIPE); that is not the job's failure, nor worth a word.
            return OUTPUT_CLOSED, moved
        if self.echoer:
            moved = self.echoer.pump() or moved
        if len(self.ended) == self.nproc:
            return ALL_ENDED, moved
        if self.watch is not None:
            self.diagnosed = self.watch.tick(now, {r: self.procs[r].returncode for r in self.ended}) or ""
            if self.diagnosed:
                return DIAGNOSED, moved
        if self.first_failure is not None and now - self.first_failure > PEER_GRACE_S:
            return PEER_FAILED, moved
        if now > self.deadline:
            return TIMED_OUT, moved
        return None, moved

    def _note_exits(self, now: float) -> bool:
        """Ranks that ended since the last poll, and when the first failed."""
        moved = False
        for rank, proc in enumerate(self.procs):
            if rank not in self.ended and proc.poll() is not None:
                self.ended[rank] = now
                moved = True
                if proc.returncode != 0 and self.first_failure is None:
                    self.first_failure = now
        return moved

    def _note_progress(self) -> bool:
        """Hand each rank's new heartbeat to on_progress. A new stage is news; a step further
        in the same one (a training heartbeat) is shown without speeding the polls up again."""
        if not self.on_progress:
            return False
        moved = False
        for rank in range(self.nproc):
            beat = read_progress(self.run_dir, rank)
            if beat != self.seen.get(rank):
                moved = moved or beat[1] != self.seen.get(rank, (0, ""))[1]
                self.seen[rank] = beat
                self.on_progress(rank, beat[1], beat[0])
        return moved

    def _end(self, why: str, now: float) -> None:
        """Stop the ranks still running, as `why` says."""
        if why == ALL_ENDED:
            return
        if why == TIMED_OUT:
            self._time_out(now)
            return
        self.output_closed = why == OUTPUT_CLOSED
        self._terminate(ProcessState.DIAGNOSED if why == DIAGNOSED else ProcessState.STOPPED)

    def _time_out(self, now: float) -> None:
        """The watchdog fired: where the work stood, every live rank's stacks, then stop."""
        self.timed_out = True
        if self.watch is not None and hasattr(self.watch, "progress_at_stop"):
            done, quiet = self.watch.progress_at_stop(now)
            self.progress = (done, quiet, self.watch.moving_window())
        for rank, proc in enumerate(self.procs):
            if rank in self.ended:
                continue
            # Marked first: a rank that dies of the dump request (too early in its start
            # to have a handler for it) was still stopped by the watchdog, not crashed.
            self.killed_as[rank] = TIMEOUT
            if read_progress(self.run_dir, rank)[1]:  # "": no handler yet, SIGUSR1 would kill it
                _signal_group(proc, DUMP_STACKS)
        time.sleep(STACK_DUMP_S)
        self._terminate(TIMEOUT)

    def _terminate(self, reason: str) -> None:
        """The death signal to every live rank's process group, TERM_GRACE_S to end, then SIGKILL."""
        live = [(r, p) for r, p in enumerate(self.procs) if r not in self.ended and p.poll() is None]
        for rank, proc in live:
            self.killed_as[rank] = reason
            _signal_group(proc, TERM)
        deadline = time.monotonic() + TERM_GRACE_S
        for rank, proc in live:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, KILL)
                _reap(proc)

    def interrupt(self, signum: int) -> None:
        """Ctrl-C, SIGTERM or SIGHUP: a second one must not cut the clean-up short."""
        if self.in_main_thread:
            for sig in self.old_handlers:
                signal.signal(sig, _ignore)
        self.interrupted = True
        self.stop_signal = signum
        self._terminate(ProcessState.INTERRUPTED)

    def close(self) -> None:
        """Whatever happened: every rank's process group killed, then the sweep for
        what left them (launch/sweep.py); the signal handlers back, the last output."""
        if self.listener is not None:
            self.listener.close()
        for proc in self.procs:
            if proc.poll() is None:
                _signal_group(proc, KILL)
                _reap(proc)
            _signal_group(proc, KILL)  # stragglers of a rank that exited
        if self.sweeper is not None:
            self.sweeper.finish()
        # Once stopped by a signal the process is on its way out: the handlers stay
        # ignoring until the caller has printed its report and exited.
        if self.in_main_thread and not self.interrupted:
            for sig, handler in self.old_handlers.items():
                signal.signal(sig, handler)
        if self.echoer and not self.output_closed:
            self.echoer.pump(final=True)
        if self.exits is not None:
            self.exits.close()

    def result(self) -> LaunchResult:
        outcomes = tuple(
            _outcome(rank, proc, self.run_dir, self.stderr_paths[rank], self.ended.get(rank), self.killed_as.get(rank))
            for rank, proc in enumerate(self.procs)
        )
        faults = parse_faults(self.base_env.get(rundir.FAULT_ENV))
        stalled = float(getattr(self.watch, "stalled_s", 0.0) or 0.0) if self.diagnosed else 0.0
        return LaunchResult(
            outcomes, self.timed_out, self.interrupted, time.monotonic() - self.started_at, self.run_dir, self.timeout,
            faults, self.stop_signal, self.diagnosed, self.output_closed, self.forgiven, stalled, *self.progress,
            self.port, self.omp_threads, self.omp_set_by,
        )


def _on_stop(signum, frame):
    raise _Terminated(signum)


class _HeldStop:
    """A stop signal (SIGINT, SIGTERM, SIGHUP) that arrives while the ranks are being
    started is noted, not raised: raised inside subprocess.Popen it would lose a rank
    already forked (its Popen never returned), so it could not be stopped or reported.
    Released once every started rank is known: the first one noted is raised then.
    A signal the caller ignores (SIG_IGN: nohup's SIGHUP, a background job's SIGINT)
    stays ignored."""

    def __init__(self, old_handlers: dict) -> None:
        self.old_handlers = old_handlers
        self.signum = 0

    @classmethod
    def install(cls, old_handlers: dict) -> _HeldStop:
        held = cls(old_handlers)
        for sig in held._stoppers():
            signal.signal(sig, held._note)
        return held

    def _stoppers(self) -> list[int]:
        """The signals held: not one the caller ignores, nor one whose handler Python cannot put back."""
        return [sig for sig in (signal.SIGINT, *STOP_SIGNALS) if self.old_handlers.get(sig) not in (None, signal.SIG_IGN)]

    def _note(self, signum, frame) -> None:
        self.signum = self.signum or signum

    def release(self) -> None:
        """SIGINT's own handler back (Python's: a KeyboardInterrupt), SIGTERM/SIGHUP to
        _Terminated; then the signal held, delivered as it would have been."""
        for sig in self._stoppers():
            signal.signal(sig, self.old_handlers[sig] if sig == signal.SIGINT else _on_stop)
        if self.signum == signal.SIGINT:
            signal.raise_signal(signal.SIGINT)
        elif self.signum:
            raise _Terminated(self.signum)


def _store_socket(base_env: dict[str, str], own_store: bool) -> tuple[socket.socket | None, int]:
    """(the socket rank 0 hosts the store on, or None; the job's MASTER_PORT)."""
    if own_store:
        # Rank 0 hosts the store on this socket, bound to 127.0.0.1 here (launch/store.py).
        held = store.listen_loopback()
        return held, held.getsockname()[1]
    base_env.pop("TORCHELASTIC_USE_AGENT_STORE", None)  # rank 0's torch binds it, as env:// does
    return None, store.free_port()


def _job_env(nproc: int, port: int, run_dir: str) -> dict[str, str]:
    """What every rank's environment has in common, beyond the caller's."""
    return {
        "MASTER_PORT": str(port),
        "WORLD_SIZE": str(nproc),
        "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_RANK": "0",
        "TORCHELASTIC_RESTART_COUNT": "0",
        "PYTHONUNBUFFERED": "1",
        rundir.RUN_DIR_ENV: run_dir,
        rundir.JOB_TAG_ENV: f"{os.getpid()}-{uuid.uuid4().hex}",
    }


class _Sweeper:
    """The sweeper process (launch/sweep.py) of one job, and its lifeline: the write
    end of a pipe that only this process holds. Closing it (or dying) starts the sweep."""

    def __init__(self, proc: subprocess.Popen, lifeline_fd: int):
        self.proc, self.lifeline_fd = proc, lifeline_fd

    @classmethod
    def start(cls, tag: str) -> _Sweeper | None:
        """None where it cannot run (not Linux) or could not be started."""
        if not sweep.available():
            return None
        read_end, write_end = os.pipe()  # neither inherited by the ranks (close_fds)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", sweep.__file__, f"{rundir.JOB_TAG_ENV}={tag}"],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,  # outside the terminal's process group: Ctrl-C is ours to handle
            )  # fmt: skip
        except OSError:
            os.close(write_end)
            return None
        finally:
            os.close(read_end)
        return cls(proc, write_end)

    def finish(self) -> None:
        """Start the sweep and wait for it, SWEEP_WAIT_S at most."""
        os.close(self.lifeline_fd)
        try:
            self.proc.wait(timeout=SWEEP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _reap(self.proc)


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


# Why the supervisor stopped a rank when that is not yet its state: the watchdog fired
# (_timed_out_state says how the rank was then).
TIMEOUT = "timeout"


def _timed_out_state(stage: str, raised: bool) -> ProcessState:
    """A rank the --timeout watchdog stopped, by its last stage."""
    if raised:
        # It raised, then was slow to leave (a backend's teardown, a busy machine):
        # its exception is the cause, not a hang.
        return ProcessState.RAISED
    if stage in STARTING_STAGES:
        return ProcessState.STARTING
    return ProcessState.NOJOIN if stage in PRE_JOIN_STAGES else ProcessState.HUNG


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
    if killed_as == TIMEOUT:
        state = _timed_out_state(stage, error is not None)
    elif killed_as:
        state = ProcessState(killed_as)
    elif rc == 0:
        state = ProcessState.OK
    elif error:
        state = ProcessState.RAISED
    elif rc is not None and rc < 0:
        state = ProcessState.SIGNALED
    else:
        state = ProcessState.EXITED
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
