"""The one failure model of a job of ranks: how it ended -> one diagnosis.

Here and nowhere else: the rank-state vocabulary (RankVerdict), the words that say a
rank lost its peer (PEER_LOSS), the one record of a rank (RankRecord, the JSON
`ranks` list of every command) and the one rule that names the root cause
(root_cause). The rank that failed first with its own error is the root cause;
ranks that failed only because a peer was gone are victims, one line each; a
collective problem found by lining the ranks' traces up (mismatch, uneven work,
stall) is the root cause when no rank failed on its own. Also the `root_cause` of
the --json report, and which rank's exit status the job takes (the CLI turns it
into the exit code)."""

from __future__ import annotations

import os
import re
import signal as signals
from collections.abc import Mapping, Sequence
import dataclasses
from dataclasses import dataclass
from enum import Enum

from gpudoctor.catalog.findings.collectives import COLLECTIVE_STALL
from gpudoctor.catalog.findings.ranks import RANK_CRASHED, RANK_PEER_LOST, RANK_RAISED, RANK_STOPPED
from gpudoctor.core.findings import Finding
from gpudoctor.knowledge.collectives import CollectiveRecord, StackFrame, analyze, short_where, user_frame
from gpudoctor.hang.meaning import ABORT_AFTER_END, explained, signal_cause
from gpudoctor.hang.meeting_point import named_meeting_point
from gpudoctor.hang.watch import STALL, CollectiveWatch, job_traces, rank_states, read_stages
from gpudoctor.launch.rundir import RankTrace, fatal_path, stderr_path
from gpudoctor.launch.supervisor import LaunchResult, ProcessState, RankOutcome


class RankVerdict(str, Enum):
    """The one vocabulary of a rank's state: every report and every JSON `ranks` list
    says each rank's state with exactly one of these (docs/json.md). Read from the
    launcher's own process state (launch/supervisor.py ProcessState), the rank's words
    and its trace (rank_state), once the job is over; every state is final:

        ProcessState OK -------------------------------------------> FINISHED
        INTERRUPTED (Ctrl-C, SIGTERM, SIGHUP) ---------------------> INTERRUPTED
        its words say a peer was gone (it failed, or was stopped) -> LOST_PEER
        EXITED, SIGNALED, RAISED (its own error) ------------------> FAILED
        NOJOIN ----------------------------------------------------> NEVER_JOINED
        STARTING --------------------------------------------------> STARTING
        HUNG, DIAGNOSED, STOPPED: in a collective or the rendezvous -> WAITING
                                  anywhere else (its own work) ----> RUNNING

    A str: its value is the word the JSON and the text have always said."""

    FINISHED = "finished"  # exited 0
    FAILED = "failed"  # ended with its own error: an exception, a non-zero exit, a signal
    LOST_PEER = "lost-peer"  # failed (or was failing) only because a peer was gone
    WAITING = "waiting"  # was stopped while blocked in a collective or the rendezvous
    RUNNING = "running"  # was stopped while not in a collective (its own work)
    STARTING = "starting"  # was stopped before it was up (Python, import torch)
    NEVER_JOINED = "never-joined"  # was stopped before it reached the rendezvous
    INTERRUPTED = "interrupted"  # stopped with the whole job by Ctrl-C / SIGTERM / SIGHUP

    def __str__(self) -> str:  # the word, in text as in JSON
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


STATES = tuple(RankVerdict)

# How a rank words "my peer went away" (gloo, NCCL, the TCPStore, torch's watchdog):
# the one list of them.
PEER_LOSS = (
    "connection closed by peer",
    "connection reset by peer",
    "broken pipe",
    "connection refused",
    "remote process exited",
    "failed to recv, got 0 bytes",
    "connection was likely closed",
    "watchdog caught collective operation timeout",
    "communicator was aborted",
    "socket closed",
)

@dataclass(frozen=True)
class InCollective:
    """The collective call a rank was in."""

    seq: int
    kind: str
    process_group: str
    where: str


@dataclass(frozen=True)
class RankRecord:
    """One rank as the verdict sees it: the one record of a rank's ending that every
    command's JSON `ranks` list holds, as is (dataclasses.asdict)."""

    rank: int
    state: RankVerdict
    where: str | None  # the user's line it was at when it ended or was stopped
    collective: InCollective | None  # the call it was in, if any
    reached: int  # the number of its last completed collective (0: none)
    exit_code: int | None
    signal: str | None
    error: str | None  # "Type: message" of its own exception, when it raised
    log: str  # its stderr


@dataclass(frozen=True)
class JobDiagnosis:
    findings: tuple[Finding, ...]
    root_cause: dict | None  # for --json
    ranks: tuple[RankRecord, ...]  # for --json (dataclasses.asdict each)
    cause_exitcode: int | None  # the raw exit code of the rank whose status the job takes (cli/exit_code decides)
    headline: str  # one line: what happened


def lost_a_peer(text: str) -> bool:
    """Whether a rank's words say its peer went away."""
    lower = text.lower()
    return any(p in lower for p in PEER_LOSS)


def is_victim(o: RankOutcome, trace: RankTrace | None) -> bool:
    """Failed only because a peer was gone (its error says so)."""
    raised = trace.exit if trace and trace.exit and trace.exit.how == "exception" else None
    if o.error is not None or raised is not None:
        # Its exception says why it failed. Lines printed after it while the process
        # tore down (the store it polled closing: "Connection was likely closed") are
        # not why: one H200 rank that raised NCCL's "Cuda failure 'device-side assert
        # triggered'" was called a peer's victim from them, alone in a world of one.
        return lost_a_peer(" ".join([raised.message if raised else "", o.error.message if o.error else ""]))
    return lost_a_peer(
        " ".join(
            [
                (trace.exit.message if trace and trace.exit else ""),
                o.error.message if o.error else "",
                *o.stderr_tail[-12:],
            ]
        )
    )


def _in_collective(trace: RankTrace | None) -> CollectiveRecord | None:
    if trace is None:
        return None
    cur = trace.current
    if cur is not None and cur.started:
        return cur
    started = [r for r in trace.records if r.started]
    return max(started, key=lambda r: r.time_ns) if started else None


def _reached(trace: RankTrace | None) -> int:
    """The number of the rank's last completed collective (send/recv have numbers of their own)."""
    if trace is None:
        return 0
    # The call it is (or died) in did not complete, even where a lost peer's failure
    # left it marked completed in the Flight Recorder.
    inside = _in_collective(trace)
    return max(
        (
            r.seq
            for r in trace.all_records()
            if r.numbered and not r.started and not (inside and (r.pg, r.seq) == (inside.pg, inside.seq))
        ),
        default=0,
    )


def _stack_where(stack: Sequence[StackFrame]) -> str:
    mine = user_frame(stack, innermost_first=False)
    return mine.where if mine else ""


def rank_where(o: RankOutcome, trace: RankTrace | None) -> str:
    """The user's line this rank was at when it ended (or was stopped)."""
    if trace is not None:
        if trace.exit and trace.exit.where and trace.exit.how != "exit":
            return trace.exit.where
        where = _stack_where(trace.stack)
        if where:
            return where
        coll = _in_collective(trace)
        if coll and coll.where:
            return coll.where
    return ""


def _signal_name(o: RankOutcome) -> str:
    if o.signal:
        return o.signal
    if o.exitcode is not None and o.exitcode < 0:
        try:
            return signals.Signals(-o.exitcode).name
        except ValueError:
            return f"signal {-o.exitcode}"
    return ""


def _how(o: RankOutcome, trace: RankTrace | None) -> tuple[str, str]:
    """(kind, words): kind is EXCEPTION | EXIT | SIGNAL."""
    exit_info = trace.exit if trace else None
    if exit_info and exit_info.how == "exception":
        return EXCEPTION, f"raised {exit_info.type}: {exit_info.message}".rstrip(": ")
    if o.error:
        return "exception", f"raised {o.error.type}: {o.error.message}".rstrip(": ")
    sig = _signal_name(o)
    if sig and exit_info and exit_info.how == "exit":  # the atexit note: its script had run to its end
        return "signal", f"was killed by {sig} after its script had ended"
    if sig:
        return "signal", f"was killed by {sig}"
    if exit_info and exit_info.how in ("os._exit", "sys.exit"):
        return "exit", f"called {exit_info.how}({o.exitcode})"
    return "exit", f"exited with code {o.exitcode}"


def _collective_text(trace: RankTrace | None) -> str:
    coll = _in_collective(trace)
    if coll is not None:
        at = f" at {short_where(coll.where)}" if coll.where else ""
        return f"in {coll.name()}{at}"
    n = _reached(trace)
    return f"after collective #{n}" if n else "before any collective"


def _collective_record(trace: RankTrace | None) -> InCollective | None:
    coll = _in_collective(trace)
    if coll is None:
        return None
    return InCollective(coll.seq, coll.kind, coll.pg, short_where(coll.where))


def _collective_json(trace: RankTrace | None) -> dict | None:
    coll = _collective_record(trace)
    return dataclasses.asdict(coll) if coll is not None else None


def rank_state(o: RankOutcome, victim: bool, trace: RankTrace | None) -> RankVerdict:
    """The rank's state in the one vocabulary (RankVerdict), from the supervisor's process
    state, whether its words say it lost a peer, and its trace (in a collective?)."""
    if o.state is ProcessState.OK:
        return RankVerdict.FINISHED
    if o.state is ProcessState.INTERRUPTED:
        return RankVerdict.INTERRUPTED
    if victim:
        return RankVerdict.LOST_PEER
    if o.state.failed_on_own():
        return RankVerdict.FAILED
    if o.state is ProcessState.NOJOIN:
        return RankVerdict.NEVER_JOINED
    if o.state is ProcessState.STARTING:
        return RankVerdict.STARTING
    # hung (the watchdog), diagnosed (the collective watch) or stopped (after a peer failed)
    in_collective = _in_collective(trace) is not None or o.last_stage == "rendezvous"
    return RankVerdict.WAITING if in_collective else RankVerdict.RUNNING


def victims(result: LaunchResult, traces: Mapping[int, RankTrace]) -> set[int]:
    """The ranks whose own words say they failed only because a peer was gone. A rank
    gpudoctor stopped after a failure may already have printed its own peer-loss error."""
    return {
        o.rank
        for o in result.ranks
        if (o.state.failed_on_own() or o.state is ProcessState.STOPPED) and is_victim(o, traces.get(o.rank))
    }


def rank_records(result: LaunchResult, traces: Mapping[int, RankTrace]) -> tuple[RankRecord, ...]:
    """Every rank's one record, by rank."""
    lost = victims(result, traces)
    out = []
    for o in sorted(result.ranks, key=lambda o: o.rank):
        trace = traces.get(o.rank)
        exc_type, exc_message = _exception(o, trace)
        out.append(
            RankRecord(
                rank=o.rank,
                state=rank_state(o, o.rank in lost, trace),
                where=short_where(rank_where(o, trace)) or None,
                collective=_collective_record(trace),
                reached=_reached(trace),
                exit_code=o.exitcode,
                signal=_signal_name(o) or None,
                error=f"{exc_type}: {_strip_location(exc_message or '')}".rstrip(": ") if exc_type else None,
                log=o.stderr_path,
            )
        )
    return tuple(out)


# What a root cause can be besides a collective finding's id.
EXCEPTION, EXIT, SIGNAL = "exception", "exit", "signal"  # a rank that failed on its own


@dataclass(frozen=True)
class Cause:
    """Where a failed job's trouble starts: one rank (None when no single rank is
    to blame) and what it is."""

    rank: int | None
    kind: str  # a collective finding's id | exception | exit | signal | never-joined | starting | waiting | running
    finding: Finding | None = None  # the collective finding, when one is the cause


def root_cause(
    result: LaunchResult, traces: Mapping[int, RankTrace], collective: Sequence[Finding] = ()
) -> Cause | None:
    """THE root-cause rule of every command, in this order:
    1. a collective finding that names its root cause, or a mismatch (it explains the
       crash it caused: gloo aborts a rank on a size mismatch); a timed-out
       monitored_barrier counts as one, naming the rank that never reached it;
    2. the first rank to fail with its own error (not a victim of a lost peer):
       the earliest to end, then the lowest rank;
    3. a collective finding, when no rank failed on its own;
    4. when the watchdog stopped the job with no such finding: a rank that never
       joined, then one still starting, then the stuck rank furthest behind (its
       lowest step; a rank not in a collective before one waiting in it);
    5. none: every rank finished, or only victims failed (no rank says why).
    An interrupted job (Ctrl-C, SIGTERM, SIGHUP) has none: the user stopped it.
    `collective`: the findings of lining the traces up (knowledge.collectives.analyze)."""
    if result.interrupted:
        return None
    lost = victims(result, traces)
    own = _own_failures(result, lost)
    coll = collective[0] if collective else None
    if coll is None and own:
        coll = _straggler(own[0], result, traces)
    if coll is not None and (not own or coll.id == "collective-mismatch" or "root cause" in coll.evidence):
        return Cause(_culprit(coll, traces), coll.id, coll)
    if own:
        return Cause(own[0].rank, _how(own[0], traces.get(own[0].rank))[0])
    if result.ok or result.still_progressing:  # out of time while moving: no rank to blame
        return None
    return _stuck_cause(result, traces, lost)


def _stuck_cause(result: LaunchResult, traces: Mapping[int, RankTrace], lost: set[int]) -> Cause | None:
    """root_cause's step 4: the stuck rank the others wait for, when the watchdog fired."""
    stuck = [o for o in result.ranks if o.state.stuck() and o.rank not in lost]
    if not stuck:
        return None
    states = {o.rank: rank_state(o, False, traces.get(o.rank)) for o in stuck}
    order = {RankVerdict.NEVER_JOINED: 0, RankVerdict.STARTING: 1, RankVerdict.RUNNING: 2, RankVerdict.WAITING: 3}
    first = min(stuck, key=lambda o: (order[states[o.rank]], o.step, o.rank))
    return Cause(first.rank, states[first.rank])


def _where_of_finding(f: Finding, rank: int | None) -> str:
    """The line a collective finding names for `rank` (its evidence reads '... at file:line ...')."""
    keys = [f"rank {rank}"] if rank is not None else []
    keys += [k for k in f.evidence if k.startswith("rank ")]
    for key in keys:
        value = f.evidence.get(key)
        if isinstance(value, str) and " at " in value:
            return value.rsplit(" at ", 1)[1].split(" (")[0].split(";")[0]
    return ""


def _culprit(f: Finding, traces: Mapping[int, RankTrace]) -> int | None:
    """The rank a collective finding points at."""
    cause = f.evidence.get("root cause", "")
    if isinstance(cause, str) and cause.startswith("rank "):
        return int(cause.split()[1])
    ranks = [int(k.split()[1]) for k in f.evidence if k.startswith("rank ") and k.split()[1].isdigit()]
    if f.id == "collective-mismatch" and ranks:
        # The odd one out: the rank whose call site the others never made.
        def oddness(rank: int) -> tuple[int, int]:
            value = str(f.evidence.get(f"rank {rank}", ""))
            where = value.rsplit(" at ", 1)[1] if " at " in value else ""
            seen = sum(
                1
                for other, t in traces.items()
                if other != rank
                for r in t.records
                if where and short_where(r.where) == where
            )
            return (seen, rank)

        return min(ranks, key=oddness)
    waiting = [r for r in ranks if "waits in" in str(f.evidence.get(f"rank {r}", "")) or "failed in" in str(f.evidence.get(f"rank {r}", ""))]
    return waiting[0] if waiting else (ranks[0] if ranks else None)


def diagnose_job(
    result: LaunchResult,
    traces: Mapping[int, RankTrace],
    collective: Sequence[Finding] | None = None,
    reason: str = "",
    gpus: int | None = None,
) -> JobDiagnosis:
    """How a job of ranks ended -> one diagnosis: its findings (human report), its
    root cause and every rank's record (JSON), all from root_cause and rank_records.
    `collective`: the findings of lining the traces up (knowledge.collectives.analyze);
    None: lined up here from `traces` (a run folder read back from disk);
    `reason`: why the supervisor stopped the job ("mismatch", "uneven", "stall") or ""."""
    if collective is None:
        collective = _line_up(result, traces)
    lost = victims(result, traces)
    records = rank_records(result, traces)
    cause = root_cause(result, traces, collective)
    own = _own_failures(result, lost)
    cause_rank = cause.rank if cause is not None else None
    if cause is not None and cause.finding is not None:
        findings, root, cause_exitcode = _collective_root(cause.finding, cause_rank, traces)
    elif cause is not None and cause.kind in (EXCEPTION, EXIT, SIGNAL) and cause_rank is not None:
        findings, root, cause_exitcode = _crash_root(result, traces, cause_rank, own, gpus)
    elif cause is not None and cause_rank is not None:
        findings, root, cause_exitcode = [], _stuck_root(result, traces, cause), None
    elif lost:
        first_victim = min((o for o in result.ranks if o.rank in lost), key=lambda o: (o.ended_s or 0, o.rank))
        findings, root, cause_exitcode = [], None, first_victim.exitcode
    else:
        findings, root, cause_exitcode = [], None, None
    findings += _bystanders(result, traces, lost, own, cause_rank)
    if root is None:
        headline = "every rank finished" if result.ok else "the job failed"
    else:
        headline = f"root cause: rank {root['rank']} ({root['kind']})"
    return JobDiagnosis(tuple(findings), root, records, cause_exitcode, headline)


def _own_failures(result: LaunchResult, lost: set[int]) -> list[RankOutcome]:
    """The ranks that failed with their own error (not victims), earliest to end first."""
    own = [o for o in result.ranks if o.state.failed_on_own() and o.rank not in lost]
    own.sort(key=lambda o: (o.ended_s if o.ended_s is not None else float("inf"), o.rank))
    return own


def _collective_root(coll: Finding, cause_rank: int | None, traces: Mapping[int, RankTrace]) -> tuple[list[Finding], dict, int | None]:
    """A collective finding is the root cause: (findings, root_cause, the job's exit status)."""
    root = {
        "rank": cause_rank,
        "kind": coll.id,
        "where": short_where(_where_of_finding(coll, cause_rank)) or None,
        "description": coll.title,
        "collective": _collective_json(traces.get(cause_rank)) if cause_rank is not None else None,
    }
    # A verdict from the traces is a problem found (1), whether gpudoctor stopped the job
    # or gloo aborted a rank on it first; a stall is the watchdog's (124, ranks_exit).
    return [coll], root, (1 if coll.id != "collective-stall" else None)


def _crash_root(
    result: LaunchResult, traces: Mapping[int, RankTrace], cause_rank: int, own: list[RankOutcome], gpus: int | None
) -> tuple[list[Finding], dict, int | None]:
    """The first rank to fail with its own error is the root cause: (findings, root_cause,
    the job's exit status); the others that failed on their own, one line each."""
    findings: list[Finding] = []
    first = next(o for o in result.ranks if o.rank == cause_rank)
    trace = traces.get(first.rank)
    kind, words = _how(first, trace)
    where = rank_where(first, trace)
    at = f" at {short_where(where)}" if where else ""
    ev: dict = {"rank": first.rank, "exit_code": first.exitcode}
    if _signal_name(first):
        ev["signal"] = _signal_name(first)
    ev["collective"] = _collective_text(trace)
    ev["log"] = first.stderr_path
    group_left = bool(trace and trace.exit and trace.exit.how == "exit" and trace.exit.group_alive)
    cause_finding = _first_failure(kind, first, where, gpus, ev, f"{words}{at}", _collective_text(trace), group_left)
    # What its error means, from the same knowledge base `diagnose` uses.
    findings.append(explained(cause_finding, first))
    exc_type, exc_message = _exception(first, trace)
    root = {
        "rank": first.rank,
        "kind": kind,
        "where": short_where(where) or None,
        "description": words,
        "type": exc_type,
        "message": exc_message,
        "exit_code": first.exitcode,
        "signal": _signal_name(first) or None,
        "collective": _collective_json(trace),
        "reached": _reached(trace),
    }
    for o in own:
        if o.rank == first.rank:
            continue
        kind2, words2 = _how(o, traces.get(o.rank))
        also = RANK_RAISED if kind2 == EXCEPTION else RANK_CRASHED
        findings.append(also(case="also", evidence={"log": o.stderr_path}, rank=o.rank, how=words2, collective=_collective_text(traces.get(o.rank))))
    return findings, root, first.exitcode


def _stuck_root(result: LaunchResult, traces: Mapping[int, RankTrace], cause: Cause) -> dict:
    """The watchdog stopped the job and lining the traces up said nothing: the stuck
    rank's root_cause (hang/failures.launch_findings words each rank's part for the report)."""
    cause_rank = cause.rank
    stuck = next(o for o in result.ranks if o.rank == cause_rank)
    trace = traces.get(stuck.rank)
    return {
        "rank": cause_rank,
        "kind": cause.kind,
        "where": short_where(rank_where(stuck, trace)) or None,
        "description": f"rank {cause_rank} was {cause.kind} when the {result.timeout_s:g} s watchdog fired",
        "collective": _collective_json(trace),
        "reached": _reached(trace),
    }


def _bystanders(
    result: LaunchResult, traces: Mapping[int, RankTrace], lost: set[int], own: list[RankOutcome], cause_rank: int | None
) -> list[Finding]:
    """One line for each rank that failed because a peer was gone, or that gpudoctor
    stopped after a rank failed."""
    findings: list[Finding] = []
    for o in sorted(result.ranks, key=lambda o: o.rank):
        if o.rank in lost and o.rank != cause_rank:
            trace = traces.get(o.rank)
            words = _victim_words(o, trace)
            crashed = own[0].rank if own else cause_rank
            named = crashed is not None and crashed != o.rank
            findings.append(
                RANK_PEER_LOST(
                    case="named" if named else "unnamed", rank=o.rank, gone=crashed, collective=_collective_text(trace), error=_short(words)
                )
            )
        elif o.state is ProcessState.STOPPED and own:
            findings.append(
                RANK_STOPPED(case="after-rank", rank=o.rank, first=own[0].rank, collective=_collective_text(traces.get(o.rank)))
            )
    return findings


def diagnose_run(result: LaunchResult, watch: CollectiveWatch | None = None, gpus: int | None = None) -> JobDiagnosis:
    """After the job: every rank's trace, stacks and ending -> one JobDiagnosis."""
    traces = job_traces(result)
    # Ranks gpudoctor stopped were still running: only those that ended by themselves have ended.
    ended = {o.rank: o.exitcode for o in result.ranks if o.state.ended_on_own()}
    states = rank_states(traces, ended, read_stages(result.run_dir, len(result.ranks)))
    reason = result.diagnosed
    # The watch's own figure live; the one the supervisor kept in outcome.json afterwards.
    stalled = (watch.stalled_s if watch is not None else result.stalled_s) if reason == STALL else None
    limit = "--hang-timeout"
    if result.timed_out and not reason:
        # the --timeout watchdog: where every rank stood when it fired (no stall while still moving)
        stalled = None if result.still_progressing else result.quiet_s()
        limit = "--timeout"
    found = named_meeting_point(result, analyze(states, stalled_s=stalled, limit=limit))
    return diagnose_job(result, traces, found, reason, gpus)


def _line_up(result: LaunchResult, traces: Mapping[int, RankTrace]) -> list[Finding]:
    """What lining the ranks' traces up says, as the run's own watch would have."""
    ended = {o.rank: o.exitcode for o in result.ranks if o.state.ended_on_own()}
    states = rank_states(traces, ended, {o.rank: o.last_stage for o in result.ranks})
    # A run folder read back: a stall there was the --timeout watchdog's (run's own
    # --hang-timeout stall is told by result.diagnosed, and needs no lining up again).
    stalled = result.quiet_s() if result.timed_out and not result.still_progressing else None
    return analyze(states, stalled_s=stalled, limit="--timeout")


_MONITORED = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier", re.I)


def _straggler(first: RankOutcome, result: LaunchResult, traces: Mapping[int, RankTrace]) -> Finding | None:
    """A rank whose monitored_barrier timed out names the ranks that never reached it:
    they, not the rank that raised, are the root cause."""
    trace = traces.get(first.rank)
    message = " ".join([trace.exit.message if trace and trace.exit else "", first.error.message if first.error else "", *first.stderr_tail[-8:]])
    m = _MONITORED.search(message)
    if m is None:
        return None
    late = [int(x) for x in re.findall(r"\d+", m.group(1)) if int(x) != first.rank]
    if not late:
        return None
    rank = late[0]
    there = rank_where(next((o for o in result.ranks if o.rank == rank), first), traces.get(rank))
    at = f" at {short_where(there)}" if there else ""
    barrier = rank_where(first, trace)
    ev = {f"rank {rank}": f"did not reach the barrier{at}", f"rank {first.rank}": f"raised at {short_where(barrier) or 'its barrier'}",
          "root cause": f"rank {rank}"}  # fmt: skip
    return COLLECTIVE_STALL(
        case="monitored" if there else "monitored-unseen", fix_case="monitored", evidence=ev, rank=rank,
        at=f" at {short_where(barrier)}" if barrier else "", waiter=first.rank, raised=_short(m.group(0), 80),
        there=short_where(there), log=stderr_path(os.path.dirname(first.stderr_path), rank),
    )  # fmt: skip


def _exception(o: RankOutcome, trace: RankTrace | None) -> tuple[str | None, str | None]:
    if trace is not None and trace.exit and trace.exit.how == "exception":
        return trace.exit.type, trace.exit.message
    if o.error:
        return o.error.type, o.error.message
    return None, None


def _victim_words(o: RankOutcome, trace: RankTrace | None) -> str:
    """The peer-loss error itself, e.g. `RuntimeError: ... Connection reset by peer`."""
    if trace is not None and trace.exit and trace.exit.how == "exception":
        return f"{trace.exit.type}: {_strip_location(trace.exit.message)}"
    for line in reversed(o.stderr_tail):
        if lost_a_peer(line):
            return _strip_location(line.split("]: ", 1)[-1].strip())
    return _how(o, trace)[1]


def _strip_location(message: str) -> str:
    """gloo prefixes its errors with its own source location: `[/path/pair.cc:537] Read error`."""
    message = re.sub(r"\[[^\]]*\.(?:cc|cpp|h|hpp):\d+\] ", "", message.strip())
    return message.split(". This is typically")[0]


def _short(words: str, limit: int = 160) -> str:
    words = " ".join(words.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def _first_failure(
    kind: str, o: RankOutcome, where: str, gpus: int | None, ev: dict, how: str, collective: str, group_left: bool = False
) -> Finding:
    """The rank that failed first: its kind, case and fix by how it failed. A signal other
    than SIGKILL adds what it means on this machine (a segfault without GPUs is not CUDA's);
    `group_left`: its script had ended with the process group never destroyed."""
    r = o.rank
    at_line = short_where(where) if where else ""
    if kind == EXCEPTION:
        fix_case = "first" if where else "first-unplaced"
        return RANK_RAISED(
            case="first", fix_case=fix_case, evidence=ev, rank=r, how=how, collective=collective, at_line=at_line, log=o.stderr_path
        )
    if kind == SIGNAL and _signal_name(o) == "SIGKILL":
        return RANK_CRASHED(case="first-killed", evidence=ev, rank=r, how=how, collective=collective)
    if kind == SIGNAL:
        after_end = group_left and _signal_name(o) == "SIGABRT"
        meaning, action = ABORT_AFTER_END if after_end else signal_cause(_signal_name(o), gpus, o.stderr_path)
        fatal = os.path.basename(fatal_path("", o.rank))
        return RANK_CRASHED(
            case="first-after-end" if after_end else "first-signal", evidence=ev, rank=r, how=how,
            collective=collective, meaning=meaning, action=action, fatal=fatal,
        )
    fix_case = "first-exit" if where else "first-exit-unplaced"
    return RANK_CRASHED(
        case="first-exit", fix_case=fix_case, evidence=ev, rank=r, how=how, collective=collective, code=o.exitcode, at_line=at_line,
        log=o.stderr_path,
    )  # fmt: skip
