"""Pure: how a job of ranks ended -> one diagnosis. The rank that failed first with
its own error is the root cause; ranks that failed only because a peer was
gone are victims, one line each; a collective problem found by lining the
ranks' traces up (mismatch, uneven work, stall) is the root cause when no
rank failed on its own. Also the `root_cause` and `ranks` of the --json report,
and which rank's exit status the job takes (the CLI turns it into the exit code)."""

from __future__ import annotations

import os
import re
import signal as signals
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.collectives import CollectiveRecord, StackFrame, short_where, user_frame
from gpudoctor.hang.failures import explained, signal_cause
from gpudoctor.launch.rundir import RankTrace, fatal_path, stderr_path
from gpudoctor.launch.supervisor import LaunchResult, RankOutcome

AREA = "ranks"

# How a rank words "my peer went away" (gloo, NCCL, the TCPStore, torch's watchdog).
PEER_GONE = (
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
class JobDiagnosis:
    findings: tuple[Finding, ...]
    root_cause: dict | None  # for --json
    ranks: tuple[dict, ...]  # for --json
    cause_exitcode: int | None  # the raw exit code of the rank whose status the job takes (cli/exit_code decides)
    headline: str  # one line: what happened


def _failed_on_own(o: RankOutcome) -> bool:
    return o.state in ("exited", "signaled", "raised")


def is_victim(o: RankOutcome, trace: RankTrace | None) -> bool:
    """Failed only because a peer was gone (its error says so)."""
    text = " ".join(
        [
            (trace.exit.message if trace and trace.exit else ""),
            o.error.message if o.error else "",
            *o.stderr_tail[-12:],
        ]
    ).lower()
    return any(p in text for p in PEER_GONE)


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
    return max((r.seq for r in trace.all_records() if r.numbered and not r.started), default=0)


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
    """(kind, words): kind is exception | exit | signal."""
    exit_info = trace.exit if trace else None
    if exit_info and exit_info.how == "exception":
        return "exception", f"raised {exit_info.type}: {exit_info.message}".rstrip(": ")
    if o.error:
        return "exception", f"raised {o.error.type}: {o.error.message}".rstrip(": ")
    sig = _signal_name(o)
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


def _collective_json(trace: RankTrace | None) -> dict | None:
    coll = _in_collective(trace)
    if coll is None:
        return None
    return {"seq": coll.seq, "kind": coll.kind, "process_group": coll.pg, "where": short_where(coll.where)}


def _rank_state(o: RankOutcome, victim: bool, trace: RankTrace | None) -> str:
    if o.state == "ok":
        return "finished"
    if _failed_on_own(o):
        return "lost-peer" if victim else "failed"
    if o.state in ("stopped", "diagnosed", "hung"):
        return "waiting" if _in_collective(trace) else "running"
    return o.state


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
    collective: Sequence[Finding],
    reason: str = "",
    gpus: int | None = None,
) -> JobDiagnosis:
    """`collective`: the findings of lining the traces up (knowledge.collectives.analyze);
    `reason`: why the supervisor stopped the job ("mismatch", "uneven", "stall") or ""."""
    # A rank gpudoctor stopped after a failure may already have printed its own peer-loss error.
    victims = {
        o.rank
        for o in result.ranks
        if (_failed_on_own(o) or o.state == "stopped") and is_victim(o, traces.get(o.rank))
    }
    own = [o for o in result.ranks if _failed_on_own(o) and o.rank not in victims]
    own.sort(key=lambda o: (o.ended_s if o.ended_s is not None else float("inf"), o.rank))
    findings: list[Finding] = []
    root_cause: dict | None = None
    cause_exitcode: int | None = None
    cause_rank: int | None = None

    coll = collective[0] if collective else None
    if coll is None and own:
        coll = _straggler(own[0], result, traces)
    # A collective mismatch explains a crash it caused (gloo aborts on a size mismatch).
    if coll is not None and (not own or coll.id == "collective-mismatch" or "root cause" in coll.evidence):
        findings.append(coll)
        cause_rank = _culprit(coll, traces)
        root_cause = {
            "rank": cause_rank,
            "kind": coll.id,
            "where": short_where(_where_of_finding(coll, cause_rank)) or None,
            "description": coll.title,
            "collective": _collective_json(traces.get(cause_rank)) if cause_rank is not None else None,
        }
        # A verdict from the traces is a problem found (1), whether gpudoctor stopped the job
        # or gloo aborted a rank on it first; a stall is the watchdog's (124, ranks_exit).
        if coll.id != "collective-stall":
            cause_exitcode = 1
    elif own:
        first = own[0]
        cause_rank = first.rank
        trace = traces.get(first.rank)
        kind, words = _how(first, trace)
        where = rank_where(first, trace)
        at = f" at {short_where(where)}" if where else ""
        ev: dict = {"rank": first.rank, "exit_code": first.exitcode}
        if _signal_name(first):
            ev["signal"] = _signal_name(first)
        ev["collective"] = _collective_text(trace)
        ev["log"] = first.stderr_path
        why = (
            "The first rank to fail with its own error is the root cause: its peers then lose "
            "their connection to it and fail or wait in the next collective."
        )
        fix = _crash_fix(kind, first, where)
        if kind == "signal" and _signal_name(first) != "SIGKILL":
            # What the signal means on this machine (a segfault without GPUs is not CUDA's).
            sig_why, sig_fix = signal_cause(_signal_name(first), gpus, first.stderr_path)
            why, fix = f"{why} {sig_why}", f"{fix}; {sig_fix}"
        cause_finding = Finding(
            id="rank-raised" if kind == "exception" else "rank-crashed",
            severity=Severity.ERROR,
            title=f"rank {first.rank} failed first: it {words}{at} ({_collective_text(trace)})",
            evidence=ev,
            why=why,
            fix=fix,
            area=AREA,
        )
        # What its error means, from the same knowledge base `diagnose` uses.
        findings.append(explained(cause_finding, first))
        exc_type, exc_message = _exception(first, trace)
        root_cause = {
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
        cause_exitcode = first.exitcode
        for o in own[1:]:
            kind2, words2 = _how(o, traces.get(o.rank))
            findings.append(
                Finding(
                    "rank-crashed" if kind2 != "exception" else "rank-raised",
                    Severity.ERROR,
                    f"rank {o.rank} also failed: it {words2} ({_collective_text(traces.get(o.rank))})",
                    {"log": o.stderr_path},
                    area=AREA,
                )
            )
    elif victims:
        first_victim = min((o for o in result.ranks if o.rank in victims), key=lambda o: (o.ended_s or 0, o.rank))
        cause_exitcode = first_victim.exitcode

    for o in sorted(result.ranks, key=lambda o: o.rank):
        if o.rank in victims and o.rank != cause_rank:
            trace = traces.get(o.rank)
            words = _victim_words(o, trace)
            crashed = own[0].rank if own else cause_rank
            gone = f"rank {crashed}" if crashed is not None and crashed != o.rank else "a peer"
            findings.append(
                Finding(
                    "rank-peer-lost",
                    Severity.INFO,
                    f"rank {o.rank} failed because {gone} was gone ({_collective_text(trace)}): {_short(words)}",
                    area=AREA,
                )
            )
        elif o.state in ("stopped",) and own:
            findings.append(
                Finding(
                    "rank-stopped",
                    Severity.INFO,
                    f"rank {o.rank} was stopped by gpudoctor after rank {own[0].rank} failed "
                    f"({_collective_text(traces.get(o.rank))})",
                    area=AREA,
                )
            )

    ranks = tuple(
        {
            "rank": o.rank,
            "state": _rank_state(o, o.rank in victims, traces.get(o.rank)),
            "where": short_where(rank_where(o, traces.get(o.rank))) or None,
            "collective": _collective_json(traces.get(o.rank)),
            "exit_code": o.exitcode,
            "signal": _signal_name(o) or None,
        }
        for o in sorted(result.ranks, key=lambda o: o.rank)
    )
    if root_cause is None:
        headline = "every rank finished" if result.ok else "the job failed"
    else:
        headline = f"root cause: rank {root_cause['rank']} ({root_cause['kind']})"
    return JobDiagnosis(tuple(findings), root_cause, ranks, cause_exitcode, headline)


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
    title = (
        f"rank {rank} never reached the monitored_barrier"
        + (f" at {short_where(barrier)}" if barrier else "")
        + f" that rank {first.rank} waited in (it raised: {_short(m.group(0), 80)})"
        + (f"; rank {rank} was{at}" if at else "")
    )
    ev = {f"rank {rank}": f"did not reach the barrier{at}", f"rank {first.rank}": f"raised at {short_where(barrier) or 'its barrier'}",
          "root cause": f"rank {rank}"}  # fmt: skip
    fix = f"look at rank {rank}: what it does instead of reaching the barrier (its log: {stderr_path(os.path.dirname(first.stderr_path), rank)})"
    return Finding("collective-stall", Severity.ERROR, title, ev, "monitored_barrier names the ranks that did not arrive within its timeout.", fix, "collectives")


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
        if any(p in line.lower() for p in PEER_GONE):
            return _strip_location(line.split("]: ", 1)[-1].strip())
    return _how(o, trace)[1]


def _strip_location(message: str) -> str:
    """gloo prefixes its errors with its own source location: `[/path/pair.cc:537] Read error`."""
    message = re.sub(r"\[[^\]]*\.(?:cc|cpp|h|hpp):\d+\] ", "", message.strip())
    return message.split(". This is typically")[0]


def _short(words: str, limit: int = 160) -> str:
    words = " ".join(words.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def _crash_fix(kind: str, o: RankOutcome, where: str) -> str:
    at = short_where(where) if where else f"the rank's log ({o.stderr_path})"
    if kind == "exception":
        return f"fix the error at {at}; the traceback is in {o.stderr_path}"
    if kind == "signal" and _signal_name(o) == "SIGKILL":
        return "killed from outside, most often by the kernel's OOM killer: dmesg -T | grep -i -E 'killed process|out of memory'"
    if kind == "signal":
        return f"a native crash: read the Python stack in {os.path.basename(fatal_path('', o.rank))} in the run folder, then `python -m gpudoctor check`"
    if not where:
        return f"the rank chose to exit with {o.exitcode}: read what it printed before, in its log ({o.stderr_path})"
    return f"the rank chose to exit with {o.exitcode} at {at}: read its log ({o.stderr_path})"
