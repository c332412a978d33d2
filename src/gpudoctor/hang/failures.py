"""Pure: a LaunchResult -> findings that name the failing rank, how it failed,
where it was, what it last printed, and what to do about it."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from gpudoctor.catalog.findings.gpudoctor import FAULT_INJECTED
from gpudoctor.catalog.findings.ranks import (
    JOINED_RANK_FAILED,
    LAUNCH_INTERRUPTED,
    RANK_CRASHED,
    RANK_HUNG,
    RANK_NEVER_JOINED,
    RANK_RAISED,
    RANK_STILL_STARTING,
    RANK_STOPPED,
    RANK_WAITING,
    RENDEZVOUS_HANG,
    TIMEOUT_STILL_PROGRESSING,
)
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.hang.meaning import explained, readable_tail, signal_cause
from gpudoctor.hang.verdict import RankVerdict, lost_a_peer, rank_records, root_cause
from gpudoctor.launch.rank import FAULT_ENV, STAGE_SCRIPT
from gpudoctor.launch.rundir import RankTrace
from gpudoctor.launch.supervisor import LaunchResult, ProcessState, RankOutcome

def _evidence(r: RankOutcome, state: str, tail: int = 8) -> dict:
    ev: dict = {"rank": r.rank, "state": state, "last_stage": r.last_stage or "not started", "step": r.step}
    if r.state.failed_on_own():  # not the signal gpudoctor itself sent
        ev["exit_code"] = r.exitcode
        if r.signal:
            ev["signal"] = r.signal
    if r.error:
        ev["exception"] = f"{r.error.type}: {r.error.message[:300]}"
    lines = readable_tail(r.stderr_tail, tail)
    if lines:
        ev["stderr_tail"] = "\n".join(lines)
    ev["log"] = r.stderr_path
    return ev


def _injected(r: RankOutcome, fault: dict[int, str]) -> str:
    kind = fault.get(r.rank)
    return f" (injected by {FAULT_ENV}={r.rank}:{kind})" if kind else ""


def segfaulted(result: LaunchResult) -> bool:
    """Whether a rank died of SIGSEGV: then the caller says how many GPUs the machine has."""
    return any(r.state is ProcessState.SIGNALED and r.signal == "SIGSEGV" for r in result.ranks)


def rank_finding(
    r: RankOutcome, result: LaunchResult, cause: RankOutcome | None, state: str, gpus: int | None = None
) -> Finding | None:
    """`cause`: the job's root-cause rank (verdict.root_cause); `state`: this rank's
    state in the one vocabulary (verdict.RankVerdict); `gpus`: CUDA devices this machine's
    torch sees (None: not known)."""
    note = _injected(r, result.faults)
    if r.state is ProcessState.SIGNALED:
        meaning, action = signal_cause(r.signal, gpus, r.stderr_path)
        return RANK_CRASHED(
            case="signal", evidence=_evidence(r, state), rank=r.rank, signal=r.signal, stage=r.last_stage, note=note,
            meaning=meaning, action=action,
        )  # fmt: skip
    if r.state is ProcessState.EXITED:
        return RANK_CRASHED(
            case="exited", evidence=_evidence(r, state), rank=r.rank, code=r.exitcode, stage=r.last_stage, note=note, log=r.stderr_path
        )
    if r.state is ProcessState.RAISED:
        raised = r.error.type if r.error else None
        if state is RankVerdict.LOST_PEER and cause is not r:  # a victim: a warning that points at the root cause
            return RANK_RAISED(
                case="victim", severity=Severity.WARN, evidence=_evidence(r, state), rank=r.rank, raised=raised or "error", log=r.stderr_path
            )
        return RANK_RAISED(
            case="raised", evidence=_evidence(r, state), rank=r.rank, raised=raised or "an exception", stage=r.last_stage, note=note,
            log=r.stderr_path,
        )  # fmt: skip
    if r.state is ProcessState.STARTING:
        # Start-up is forgiven only where the launcher was asked to (allreduce, train-smoke):
        # `run --timeout` is wall-clock time from the start, the import included.
        wall = "script" if r.last_stage == STAGE_SCRIPT else "wall-clock"  # its script runs, torch not imported yet
        return RANK_STILL_STARTING(
            case="forgiven" if result.startup_s else wall,
            evidence={**_evidence(r, state), "startup_s": round(result.startup_s, 1), "timeout_s": result.timeout_s},
            rank=r.rank, startup=result.startup_s, timeout=result.timeout_s, note=note,
        )  # fmt: skip
    if r.state is ProcessState.NOJOIN:
        return RANK_NEVER_JOINED(evidence=_evidence(r, state), rank=r.rank, timeout=result.timeout_s, note=note)
    if r.state is ProcessState.HUNG:
        return _hung_finding(r, result, cause, state, note)
    if r.state is ProcessState.STOPPED:
        return RANK_STOPPED(case="after-peer", evidence=_evidence(r, state, tail=4), rank=r.rank)
    return None


def _hung_finding(r: RankOutcome, result: LaunchResult, cause: RankOutcome | None, state: str, note: str) -> Finding:
    """A rank the watchdog stopped past the rendezvous: all in the rendezvous, one waiting
    for the root-cause rank, or the stuck one."""
    waiting = r.last_stage == "rendezvous"
    if waiting and all(x.last_stage == "rendezvous" for x in result.ranks):
        return RENDEZVOUS_HANG(case="watchdog", evidence=_evidence(r, state), rank=r.rank, timeout=result.timeout_s)
    if cause is not None and cause is not r:
        return RANK_WAITING(evidence=_evidence(r, state, tail=4), rank=r.rank, cause=cause.rank, stage=r.last_stage)
    return RANK_HUNG(
        evidence=_evidence(r, state, tail=16), rank=r.rank, stage=r.last_stage, step=r.step, timeout=result.timeout_s, note=note
    )


def launch_findings(
    result: LaunchResult,
    gpus: int | None = None,
    traces: Mapping[int, RankTrace] | None = None,
    collective: Sequence[Finding] = (),
) -> list[Finding]:
    """Findings for a run: one per failed rank, root cause first; nothing when all went well.
    `gpus`: CUDA devices on this machine, when known (a crash is explained by what is there);
    `traces`: the ranks' collective traces, when read (where each rank was); `collective`:
    what lining them up found (it may name the root cause)."""
    if result.interrupted:
        ev = {"ranks": len(result.ranks), "logs": result.run_dir}
        return [LAUNCH_INTERRUPTED(evidence=ev, elapsed=result.elapsed_s, ranks=len(result.ranks))]
    traces = traces or {}
    if result.still_progressing and not any(r.state.failed_on_own() for r in result.ranks):
        return [out_of_time(result, traces)]
    found = root_cause(result, traces, collective)
    cause = next((r for r in result.ranks if found is not None and r.rank == found.rank), None)
    states = {rec.rank: rec.state for rec in rank_records(result, traces)}
    ordered = sorted(result.ranks, key=lambda r: (r is not cause, r.rank))
    pairs = ((rank_finding(r, result, cause, states[r.rank], gpus), r) for r in ordered)
    return [explained(f, r) for f, r in pairs if f]


def out_of_time(result: LaunchResult, traces: Mapping[int, RankTrace]) -> Finding:
    """The --timeout watchdog stopped ranks that were still completing work: out of
    time, not hung (LaunchResult.still_progressing)."""
    from gpudoctor.hang.verdict import rank_records

    ev: dict = {
        "completed": result.progress_done,
        "last activity": f"{result.progress_quiet_s:.1f} s before the watchdog fired (a collective call entered or a heartbeat)",
        "moving window": f"{result.progress_window_s:.1f} s",
        "timeout_s": result.timeout_s,
    }
    for rec in rank_records(result, traces):
        where = f" (at {rec.where})" if rec.where else ""
        ev[f"rank {rec.rank}"] = f"completed collective #{rec.reached}, step {_step(result, rec.rank)}{where}"
    ev["logs"] = result.run_dir
    return TIMEOUT_STILL_PROGRESSING(
        evidence=ev, done=_done_words(result, traces), timeout=result.timeout_s, quiet=result.progress_quiet_s,
        more=_more(result.timeout_s),
    )  # fmt: skip


def _step(result: LaunchResult, rank: int) -> int:
    return next((max(0, r.step) for r in result.ranks if r.rank == rank), 0)


def _done_words(result: LaunchResult, traces: Mapping[int, RankTrace]) -> str:
    """`12 collectives (rank 0 at #6, rank 1 at #6)` or `40 steps`: what the ranks got through."""
    from gpudoctor.hang.verdict import rank_records

    reached = {rec.rank: rec.reached for rec in rank_records(result, traces)}
    steps = [max(0, r.step) for r in result.ranks]
    if any(reached.values()):
        at = ", ".join(f"rank {r} at #{n}" for r, n in sorted(reached.items()))
        most = max(reached.values())
        return f"{most} collective{'' if most == 1 else 's'} ({at})"
    done = max(steps)
    return f"{done} step" if done == 1 else f"{done} steps"


def _more(timeout_s: float) -> str:
    """A longer --timeout to suggest: four times this one, rounded up to a minute."""
    return f"{max(60, int(-(-timeout_s * 4 // 60)) * 60)}"


def joined_failure(
    ctx, exc: BaseException, progress: str, command: str, peers: Sequence[tuple[str, str, tuple[int, ...]]] = ()
) -> Finding:
    """Rank 0 of a torchrun/SLURM job failed: it sees only its own side, so say
    what its error most likely means about the peers it cannot see. `peers`:
    (address, node name, its ranks) for every node the job's comparison saw, so
    that an address in the error names the node that went away."""
    import traceback

    from gpudoctor.knowledge import explain_lines, only_lost_a_peer

    text = str(exc).strip()
    message = text.splitlines()[0][:160] if text else ""
    lower = text.lower()
    said = [f"{type(exc).__name__}: {line}" for line in text.splitlines()[:1]] + text.splitlines()[1:]
    if "timed out" in lower or "timeout" in lower:
        what = "timed out waiting for a peer (a rank hung or never joined?)"
    elif lost_a_peer(text) or only_lost_a_peer(said):
        what = "lost a peer (a rank crashed?)"
    else:
        what = f"raised {type(exc).__name__}"
    known = [m for m in explain_lines(said) if m.evidence.get("role") != "harmless"]
    # an error that is itself a cause (NCCL's "Duplicate GPU detected") is not a peer's doing
    own = known[0] if known and known[0].evidence.get("role") == "cause" and what.startswith("raised") else None
    gone = peer_node(text, peers)
    if gone is not None:
        name, ranks = gone
        on = f" (rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))})" if ranks else ""
        what = f"{what.split(' (')[0]}: node {name}{on}"
    return JOINED_RANK_FAILED(
        evidence={
            "rank": ctx.rank,
            "world_size": ctx.world_size,
            "launched by": ctx.joined_by,
            **({"node": gone[0], "at": time.strftime("%H:%M:%S %Z")} if gone else {}),
            **({"node ranks": list(gone[1])} if gone and gone[1] else {}),
            "exception": f"{type(exc).__name__}: {message}",
            **({"diagnosis": known[0].id, "meaning": known[0].title} if known else {}),
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-1500:],
        },
        case="own" if own else "peer", fix_case="own" if own else command, rank=ctx.rank, launcher=ctx.joined_by,
        what=what, progress=progress, nproc=ctx.local_world_size, diagnosis=own.id if own else "",
        meaning=own.title if own else "", own_why=own.why if own else "", own_fix=own.fix if own else "",
    )  # fmt: skip


def peer_node(text: str, peers: Sequence[tuple[str, str, tuple[int, ...]]]) -> tuple[str, tuple[int, ...]] | None:
    """The node whose address the error names (gloo: "Connection closed by peer
    [10.0.0.2]:41234"; a store: "connect to 10.0.0.2:29500"), when exactly one does."""
    import re

    named = set(re.findall(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])", text))
    named |= {m.lower() for m in re.findall(r"\[([0-9A-Fa-f:]*:[0-9A-Fa-f:]+)\]", text)}
    hits = {(name, ranks) for address, name, ranks in peers if address.lower() in named}
    if not peers and len(named) == 1:
        # the nodes were never compared (the peer went before that): its name as this node resolves it
        address = next(iter(named))
        host = host_name(address)
        return (f"{host} ({address})" if host else address, ())
    return next(iter(hits)) if len(hits) == 1 else None


def host_name(address: str, timeout_s: float = 2.0) -> str:
    """`address`'s host name from /etc/hosts or DNS, "" when it has none or the
    lookup takes longer than timeout_s (a slow resolver must not delay the report)."""
    import socket
    import threading

    found: list[str] = []

    def look() -> None:
        try:
            found.append(socket.gethostbyaddr(address)[0])
        except (OSError, UnicodeError):
            pass

    thread = threading.Thread(target=look, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return found[0] if found else ""


def fault_findings(spec: str | None, ignored: str) -> list[Finding]:
    """First in a report: a fault injected on purpose (`--fault`), or one the
    environment asked for and that was not acted on."""
    out = []
    if spec:
        out.append(FAULT_INJECTED(case="flag", evidence={"fault": spec}, spec=spec))
    if ignored:
        out.append(FAULT_INJECTED(case="ignored", evidence={"ignored": f"{FAULT_ENV}={ignored}"}, spec=ignored))
    return out
