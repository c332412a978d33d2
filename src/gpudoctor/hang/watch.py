"""The supervisor's side of the hang & crash doctor: read what the ranks publish
in the run folder, line their collectives up while the job runs, and say when
to stop it — a mismatch or a rank waiting for a finished peer at once, a stall
after `hang_timeout` seconds without collective progress (once every rank's
stack is in)."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.collectives import RankState, find_cycle, find_mismatch, find_uneven
from gpudoctor.launch import rundir as run_folder
from gpudoctor.hang.tracer import DEFAULT_HANG_TIMEOUT_S
from gpudoctor.launch.rank import STARTING_STAGES, STARTUP_LIMIT_S, read_progress

READ_S = 0.25  # how often the traces are read
STACKS_WAIT_S = 3.0  # how long ranks get to answer a stack request
FAILING_GRACE_S = 3.0  # how long a rank that said it raised gets to exit (supervisor.PEER_GRACE_S)

MISMATCH, UNEVEN, STALL, DEADLOCK = "mismatch", "uneven", "stall", "deadlock"
# A job whose ranks completed work this recently when a watchdog fired was still moving:
# at least PROGRESS_WINDOW_S (a moving rank's trace is published every PUBLISH_MOVING_S; its
# current call, at every call; the watch reads every READ_S, later on a busy machine), and
# never less than PROGRESS_GAPS times its longest pause between two completions so far (a job
# that completes a collective every 7 s is not hung 5 s after its last one).
PROGRESS_WINDOW_S = 3.0
PROGRESS_GAPS = 2.0
# A cycle of blocked ranks is certain once every rank's trace has had time to say it
# moved on: a moving rank publishes at least every collective_trace.PUBLISH_MOVING_S.
DEADLOCK_CONFIRM_S = 2.5


def rank_states(
    traces: Mapping[int, run_folder.RankTrace],
    returncodes: Mapping[int, int | None],
    stages: Mapping[int, str] | None = None,
) -> list[RankState]:
    """The ranks as the analysis sees them: a rank that ended has ended "finished"
    (exit 0) or "failed", and its last call counts even when it died before publishing it.
    `stages`: the launcher's stage of each rank ("rendezvous" while in init_process_group)."""
    out = []
    for rank in sorted(traces):
        t = traces[rank]
        rc = returncodes.get(rank)
        ended = "" if rank not in returncodes else ("finished" if rc == 0 else "failed")
        records = t.all_records() if ended else t.records
        out.append(RankState(rank, tuple(records), ended, t.stack, (stages or {}).get(rank, "")))
    return out


def _starting(state: RankState, stages: Mapping[int, str]) -> bool:
    """Still starting by its heartbeat, and no collective yet to say otherwise."""
    return state.rank in stages and stages[state.rank] in STARTING_STAGES and not state.records


def read_stages(run_dir: str, nproc: int) -> dict[int, str]:
    return {r: read_progress(run_dir, r)[1] for r in range(nproc)}


class CollectiveWatch:
    def __init__(self, run_dir: str, nproc: int, hang_timeout: float | None = DEFAULT_HANG_TIMEOUT_S):
        self.run_dir = run_dir
        self.nproc = nproc
        self.hang_timeout = hang_timeout or None
        self.next_read = 0.0
        self.progress_key: object = None
        self.last_progress = 0.0
        self.asked_stacks_at: float | None = None
        self.reason: str | None = None
        self.stalled_s: float = 0.0
        self.traces: dict[int, run_folder.RankTrace] = {}
        self.stamps: dict[int, int] = {}
        self.seen: object = None
        self.states: list[RankState] = []
        self.failing_since: float | None = None
        self.asked_after_crash = False
        self.cycle: tuple | None = None  # the blocked calls of a deadlock seen, and since when
        self.cycle_since = 0.0
        self.done = 0  # completed work so far: collectives and heartbeat steps, summed over the ranks
        self.active_ns = 0  # wall-clock ns of the ranks' newest activity (a call entered, a heartbeat)
        self.calls_ns = 0  # ... of the newest collective call entered
        self.longest_gap = 0.0  # the longest pause between two activities seen, s

    def read(self) -> dict[int, run_folder.RankTrace]:
        """Each rank's trace, parsed again only when the rank published a new one."""
        for r in range(self.nproc):
            try:
                stamp = os.stat(run_folder.trace_path(self.run_dir, r)).st_mtime_ns
            except OSError:
                stamp = 0
            if r not in self.traces or self.stamps.get(r) != stamp:
                self.stamps[r] = stamp
                self.traces[r] = run_folder.read_trace(self.run_dir, r, with_current=False)
        return dict(self.traces)

    def tick(self, now: float, returncodes: Mapping[int, int | None]) -> str | None:
        """Called by the supervisor's loop; the reason to stop the job, or None.
        `returncodes`: the ranks that have ended, with their exit codes."""
        if now < self.next_read:
            return None
        self.next_read = now + READ_S
        if self.asked_stacks_at is not None:
            return self._stacks_in(now, returncodes)
        if any(rc not in (0, None) for rc in returncodes.values()):
            # A crash: the supervisor's own path reports it. The ranks still running are
            # stopped a few seconds later (supervisor.PEER_GRACE_S): their stacks, taken
            # now, say where each one was (a straggler's own line, a victim's wait).
            if not self.asked_after_crash:
                self.asked_after_crash = True
                self.request_stacks([r for r in range(self.nproc) if r not in returncodes])
            return None
        traces = self.read()
        self._count_done(now, traces)
        if self._failing(now, traces, returncodes):
            return None  # a crash on its way out: its exit, then the same path, reports it
        stages = self.stages()
        seen = (tuple(sorted(self.stamps.items())), tuple(sorted(returncodes.items())), tuple(sorted(stages.items())))
        if seen != self.seen:
            self.seen = seen
            self.states = rank_states(traces, returncodes, stages)
            verdict = self._judge(self.states, returncodes)
            if verdict:
                return verdict
        if self._deadlocked(now, self.states):
            self.reason = DEADLOCK
            return DEADLOCK
        if now < STARTUP_LIMIT_S and any(_starting(s, stages) for s in self.states if s.rank not in returncodes):
            self.progress_key = None  # a rank still starting (Python, import torch) holds no one up yet
            return None
        return self._stall(now, self.states, returncodes)

    def _count_done(self, now: float, traces: Mapping[int, run_folder.RankTrace]) -> None:
        """What the ranks got through (completed collectives plus heartbeat steps, for the
        report's words) and when they last did something: the newest collective call any
        rank entered (its trace, its current-call file) or heartbeat it wrote, on this
        machine's wall clock. A re-publication of the same records moves neither: a rank
        entering a collective that never completes is its last activity, and a hang is the
        time since."""
        done = 0
        calls = beats = 0
        for r in range(self.nproc):
            t = traces.get(r)
            cur = run_folder.read_current(self.run_dir, r)
            done += max(completed(t) if t is not None else 0, _current_done(cur)) + max(0, read_progress(self.run_dir, r)[0])
            stamps = [rec.time_ns for rec in (t.records if t is not None else ())]
            if cur is not None:
                stamps.append(cur.time_ns)
            calls = max(calls, *stamps, 0)
            try:
                beats = max(beats, os.stat(run_folder.progress_path(self.run_dir, r)).st_mtime_ns)
            except OSError:
                pass
        self.done = max(self.done, done)
        # The job's own rhythm is the pauses between collective calls (start-up's long
        # import, seen in the heartbeats, is not part of it).
        if calls > self.calls_ns:
            if self.calls_ns:
                self.longest_gap = max(self.longest_gap, (calls - self.calls_ns) / 1e9)
            self.calls_ns = calls
        self.active_ns = max(self.active_ns, calls, beats)

    def progress_at_stop(self, now: float) -> tuple[int, float]:
        """(completed work, seconds since the ranks' last activity; -1 when none was
        seen) when a watchdog stops the job: the newest traces and heartbeats read first."""
        self._count_done(now, self.read())
        if not self.active_ns or not self.done:
            return self.done, -1.0
        return self.done, max(0.0, (time.time_ns() - self.active_ns) / 1e9)

    def moving_window(self) -> float:
        """How recent the last completion must be for the job to count as still moving."""
        return max(PROGRESS_WINDOW_S, PROGRESS_GAPS * self.longest_gap)

    def _deadlocked(self, now: float, states: list[RankState]) -> bool:
        """The same cycle of blocked calls for DEADLOCK_CONFIRM_S."""
        cycle = find_cycle(states)
        key = tuple((s.rank, s.waiting()) for s in cycle) if cycle else None
        if key != self.cycle:
            self.cycle, self.cycle_since = key, now
            return False
        return key is not None and now - self.cycle_since >= DEADLOCK_CONFIRM_S

    def _failing(self, now: float, traces: Mapping[int, run_folder.RankTrace], returncodes: Mapping[int, int | None]) -> bool:
        """A live rank whose trace says it raised (or called os._exit with an error) is
        a crash whose process has not ended yet (its traceback, the interpreter's
        teardown): read now, it would pass for a rank waiting in its collective. It
        gets FAILING_GRACE_S to end before the watch judges without it."""
        failing = any(
            r not in returncodes and t.exit is not None and (t.exit.how == "exception" or (t.exit.how in ("os._exit", "sys.exit") and t.exit.code))
            for r, t in traces.items()
        )
        if not failing:
            self.failing_since = None
            return False
        if self.failing_since is None:
            self.failing_since = now
        return now - self.failing_since < FAILING_GRACE_S

    def _judge(self, states: list[RankState], returncodes: Mapping[int, int | None]) -> str | None:
        if find_mismatch(states):
            self.reason = MISMATCH
            return MISMATCH
        if returncodes and find_uneven(states):
            self.reason = UNEVEN
            return UNEVEN
        return None

    def _stall(self, now: float, states: list[RankState], returncodes: Mapping[int, int | None]) -> str | None:
        key = tuple(
            (s.rank, s.stage, len(s.records), tuple((r.seq, r.state) for r in s.records[-2:])) for s in states
        )
        if key != self.progress_key:
            self.progress_key = key
            self.last_progress = now
            return None
        waiting = any(s.blocked() for s in states)
        if self.hang_timeout and waiting and now - self.last_progress >= self.hang_timeout:
            self.stalled_s = now - self.last_progress
            self.asked_stacks_at = now
            self.request_stacks([r for r in range(self.nproc) if r not in returncodes])
        return None

    def stages(self) -> dict[int, str]:
        return read_stages(self.run_dir, self.nproc)

    def request_stacks(self, ranks: list[int]) -> None:
        """Ask these ranks for every thread's stack (they answer within ~0.5 s)."""
        for rank in ranks:
            try:
                with open(run_folder.request_path(self.run_dir, rank), "w"):
                    pass
            except OSError:
                pass

    def answered(self, ranks: list[int]) -> bool:
        return all(os.path.exists(run_folder.stacks_path(self.run_dir, r)) for r in ranks)

    def _stacks_in(self, now: float, returncodes: Mapping[int, int | None]) -> str | None:
        assert self.asked_stacks_at is not None
        live = [r for r in range(self.nproc) if r not in returncodes]
        if self.answered(live) or now - self.asked_stacks_at >= STACKS_WAIT_S:
            self.reason = STALL
            return STALL
        return None


def completed(trace: run_folder.RankTrace) -> int:
    """A rank's completed collectives: the highest completed number in each group, summed."""
    top: dict[str, int] = {}
    for r in trace.records:
        if r.numbered and not r.started:
            top[r.pg] = max(top.get(r.pg, 0), r.seq)
    return sum(top.values())


def _current_done(cur) -> int:
    """The number of the rank's last completed collective by its current-call record,
    which it writes at every call (its published trace lags by up to PUBLISH_MOVING_S)."""
    if cur is None or not cur.numbered:
        return 0
    return cur.seq - 1 if cur.started else cur.seq


def read_traces(run_dir: str, nproc: int) -> dict[int, run_folder.RankTrace]:
    return {r: run_folder.read_trace(run_dir, r) for r in range(nproc)}


def job_traces(result) -> dict[int, run_folder.RankTrace]:
    """Every rank's trace after the job, with the stacks a watchdog's SIGUSR1 dumped."""
    return _with_dumped_stacks(result, read_traces(result.run_dir, len(result.ranks)))


def collective_findings(result, traces: Mapping[int, run_folder.RankTrace] | None = None) -> list:
    """For the ranks of allreduce / train-smoke: what lining their traces up says
    when the job was stopped for a collective problem or by the watchdog (the
    ranks' stacks then come from the SIGUSR1 dump at the end of their stderr)."""
    from gpudoctor.knowledge.collectives import analyze

    if not (result.diagnosed or result.timed_out):
        return []
    traces = traces if traces is not None else job_traces(result)
    ended = {o.rank: o.exitcode for o in result.ranks if o.state.ended_on_own()}
    stalled = result.quiet_s() if result.timed_out and not result.still_progressing else None
    # Their watchdog is the command's --timeout (they have no --hang-timeout).
    states = rank_states(traces, ended, read_stages(result.run_dir, len(result.ranks)))
    found = analyze(states, stalled_s=stalled, limit="--timeout")
    if result.timed_out and not result.diagnosed:
        # The watchdog's own finding (rank-hung) is the error; this says where every rank stood.
        found = [dataclasses.replace(f, severity=Severity.WARN) for f in found]
    return found


def _with_dumped_stacks(result, traces: dict[int, run_folder.RankTrace]) -> dict[int, run_folder.RankTrace]:
    """A rank that did not answer a stack request in the run folder may have printed
    its stacks for the watchdog's SIGUSR1 (faulthandler, at the end of its stderr)."""
    if not result.timed_out:
        return traces
    for o in result.ranks:
        t = traces.get(o.rank)
        if t is not None and not t.stack:
            dumped = run_folder.trace_from_payload(o.rank, None, _last_dump(o.stderr_path))
            traces[o.rank] = dataclasses.replace(t, stack=dumped.stack, stacks_text=dumped.stacks_text)
    return traces


def _last_dump(path: str) -> str:
    """The last faulthandler dump in a rank's stderr (its stacks, every thread)."""
    from gpudoctor.core.user_file import read_tail

    try:
        text = read_tail(path, 65536)[0].decode("utf-8", "replace")
    except (OSError, ValueError):  # FileRefused is a ValueError
        return ""
    start = text.rfind("Thread 0x")
    first = text.rfind("\n\n", 0, start) if start >= 0 else -1
    return text[first + 2 :] if start >= 0 else ""
