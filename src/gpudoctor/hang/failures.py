"""Pure: a LaunchResult -> findings that name the failing rank, how it failed,
where it was, what it last printed, and what to do about it."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.hang.meaning import explained, readable_tail, signal_cause
from gpudoctor.hang.verdict import RankVerdict, lost_a_peer, rank_records, root_cause
from gpudoctor.launch.rank import FAULT_ENV
from gpudoctor.launch.rundir import RankTrace
from gpudoctor.launch.supervisor import LaunchResult, ProcessState, RankOutcome

AREA = "ranks"

HANG_WHY = (
    "A rank that stops making progress blocks every peer at the next collective: "
    "a deadlock in its own code, a collective the other ranks never call, or a broken transport."
)
HANG_FIX = (
    "read the stack in stderr_tail (dumped just before the rank was stopped) for the line it is stuck on; "
    "if it is only slow, raise --timeout; on GPUs rerun with NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 to rule out P2P"
)
NOJOIN_WHY = (
    "The rank never reached the rendezvous, so its peers wait in init_process_group until the timeout: "
    "it is stuck or slow before init (imports, data loading), or cannot reach MASTER_ADDR:MASTER_PORT."
)
RENDEZVOUS_WHY = (
    "Every rank reached init_process_group and none got past it: the rendezvous itself is broken "
    "(MASTER_ADDR unreachable, a firewall, a port in use, NCCL_SOCKET_IFNAME naming a missing interface)."
)


STARTING_WHY = (
    "The rank had not got past its start-up: the interpreter and `import torch` (tens of seconds on a busy "
    "machine, minutes from a slow network file system). Start-up does not count against the watchdog up to "
    "5 minutes; past that, something on this machine is making the import crawl (CPU, disk, a lock)."
)


STARTING_WALL_WHY = (
    "The rank had not got past its start-up: the interpreter and `import torch` (seconds, tens of seconds on a "
    "busy machine). This --timeout counts wall-clock time from the start, start-up included: it was shorter than "
    "the import takes here."
)


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
        why, fix = signal_cause(r.signal, gpus, r.stderr_path)
        return Finding(
            id="rank-crashed",
            severity=Severity.ERROR,
            title=f"rank {r.rank} crashed: killed by {r.signal} after '{r.last_stage}'{note}",
            evidence=_evidence(r, state),
            why=why,
            fix=fix,
            area=AREA,
        )
    if r.state is ProcessState.EXITED:
        return Finding(
            id="rank-crashed",
            severity=Severity.ERROR,
            title=f"rank {r.rank} exited with code {r.exitcode} after '{r.last_stage}'{note}",
            evidence=_evidence(r, state),
            why="The rank's process ended with a non-zero exit code; its peers cannot finish without it.",
            fix=f"less {r.stderr_path}   # the rank's own output says why it exited",
            area=AREA,
        )
    if r.state is ProcessState.RAISED:
        raised = r.error.type if r.error else None
        victim = state is RankVerdict.LOST_PEER and cause is not r
        return Finding(
            id="rank-raised",
            severity=Severity.WARN if victim else Severity.ERROR,
            title=(
                f"rank {r.rank} lost its peer mid-collective ({raised or 'error'})"
                if victim
                else f"rank {r.rank} raised {raised or 'an exception'} at '{r.last_stage}'{note}"
            ),
            evidence=_evidence(r, state),
            why=(
                "This rank failed only because another rank went away: look at the root-cause rank."
                if victim
                else "An exception in one rank ends its process; the others then fail or hang at the next collective."
            ),
            fix=f"less {r.stderr_path}   # the traceback names the failing line",
            area=AREA,
        )
    if r.state is ProcessState.STARTING:
        return Finding(
            id="rank-still-starting",
            severity=Severity.ERROR,
            title=f"rank {r.rank} was still starting (Python, import torch) when the watchdog fired "
            + (f"({result.startup_s:.0f} s of start-up, then {result.timeout_s:g} s)" if result.startup_s else f"after {result.timeout_s:g} s")
            + note,
            evidence={**_evidence(r, state), "startup_s": round(result.startup_s, 1), "timeout_s": result.timeout_s},
            # Start-up is forgiven only where the launcher was asked to (allreduce, train-smoke):
            # `run --timeout` is wall-clock time from the start, the import included.
            why=STARTING_WHY if result.startup_s else STARTING_WALL_WHY,
            fix="time python -c 'import torch'   # how long the import takes here; then give the command a longer --timeout",
            area=AREA,
        )
    if r.state is ProcessState.NOJOIN:
        return Finding(
            id="rank-never-joined",
            severity=Severity.ERROR,
            title=f"rank {r.rank} never joined the rendezvous within {result.timeout_s:g} s{note}",
            evidence=_evidence(r, state),
            why=NOJOIN_WHY,
            fix="check MASTER_ADDR/MASTER_PORT are reachable from every node (nc -zv $MASTER_ADDR $MASTER_PORT), "
            "and that nothing before init_process_group blocks",
            area=AREA,
        )
    if r.state is ProcessState.HUNG:
        return _hung_finding(r, result, cause, state, note)
    if r.state is ProcessState.STOPPED:
        return Finding(
            id="rank-stopped",
            severity=Severity.INFO,
            title=f"rank {r.rank} was stopped by gpudoctor after another rank failed",
            evidence=_evidence(r, state, tail=4),
            area=AREA,
        )
    return None


def _hung_finding(r: RankOutcome, result: LaunchResult, cause: RankOutcome | None, state: str, note: str) -> Finding:
    """A rank the watchdog stopped past the rendezvous: all in the rendezvous, one waiting
    for the root-cause rank, or the stuck one."""
    waiting = r.last_stage == "rendezvous"
    if waiting and all(x.last_stage == "rendezvous" for x in result.ranks):
        return Finding(
            id="rendezvous-hang",
            severity=Severity.ERROR,
            title=f"rank {r.rank} waited in the rendezvous for {result.timeout_s:g} s",
            evidence=_evidence(r, state),
            why=RENDEZVOUS_WHY,
            fix="export MASTER_ADDR=<reachable ip> MASTER_PORT=<free port>; check NCCL_SOCKET_IFNAME with `ip -br addr`",
            area=AREA,
        )
    if cause is not None and cause is not r:
        return Finding(
            id="rank-waiting",
            severity=Severity.WARN,
            title=f"rank {r.rank} was waiting for rank {cause.rank} at '{r.last_stage}' when the watchdog fired",
            evidence=_evidence(r, state, tail=4),
            why="A healthy rank blocked in a collective that a stuck peer never entered.",
            fix=f"look at rank {cause.rank} first",
            area=AREA,
        )
    return Finding(
        id="rank-hung",
        severity=Severity.ERROR,
        title=f"rank {r.rank} was stuck after '{r.last_stage}' (step {r.step}) when the {result.timeout_s:g} s watchdog fired{note}",
        evidence=_evidence(r, state, tail=16),
        why=HANG_WHY,
        fix=HANG_FIX,
        area=AREA,
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
        return [
            Finding(
                id="launch-interrupted",
                severity=Severity.ERROR,
                title=f"interrupted after {result.elapsed_s:.1f} s: all {len(result.ranks)} ranks were stopped",
                evidence={"ranks": len(result.ranks), "logs": result.run_dir},
                why="Ctrl-C or SIGTERM reached gpudoctor; it stopped every rank and left no process behind.",
                fix="rerun the same command when ready",
                area=AREA,
            )
        ]
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
    from gpudoctor.catalog import fix, why
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
    done = _done_words(result, traces)
    return Finding(
        id="timeout-still-progressing",
        severity=Severity.WARN,
        title=(
            f"ran out of time after {done}, still progressing: the {result.timeout_s:g} s --timeout fired "
            f"{result.progress_quiet_s:.1f} s after the ranks' last collective call or step"
        ),
        evidence=ev,
        why=why("timeout-still-progressing", timeout=result.timeout_s),
        fix=fix("timeout-still-progressing", rerun=f"give it more time: rerun with --timeout {_more(result.timeout_s)}"),
        area=AREA,
    )


def _step(result: LaunchResult, rank: int) -> int:
    return next((max(0, r.step) for r in result.ranks if r.rank == rank), 0)


def _done_words(result: LaunchResult, traces: Mapping[int, RankTrace]) -> str:
    """`12 collectives (rank 0 at #6, rank 1 at #6)` or `40 steps`: what the ranks got through."""
    from gpudoctor.hang.verdict import rank_records

    reached = {rec.rank: rec.reached for rec in rank_records(result, traces)}
    steps = [max(0, r.step) for r in result.ranks]
    if any(reached.values()):
        at = ", ".join(f"rank {r} at #{n}" for r, n in sorted(reached.items()))
        return f"{max(reached.values())} collectives ({at})"
    return f"{max(steps)} steps"


def _more(timeout_s: float) -> str:
    """A longer --timeout to suggest: four times this one, rounded up to a minute."""
    return f"{max(60, int(-(-timeout_s * 4 // 60)) * 60)}"


def joined_failure(
    ctx, exc: BaseException, progress: str, fix: str, peers: Sequence[tuple[str, str, tuple[int, ...]]] = ()
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
    gone = peer_node(text, peers)
    if gone is not None:
        name, ranks = gone
        on = f" (rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))})" if ranks else ""
        what = f"{what.split(' (')[0]}: node {name}{on}"
    return Finding(
        id="joined-rank-failed",
        severity=Severity.ERROR,
        title=f"rank {ctx.rank} of the {ctx.joined_by} job {what}{progress}",
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
        why="Under torchrun or SLURM each rank is its own process and rank 0 only sees its own side: a peer that "
        "crashed, hung or never joined shows here as a timeout or a closed connection.",
        fix=fix,
        area=AREA,
    )


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
    from gpudoctor.catalog import fix, why

    out = []
    if spec:
        out.append(Finding(
            id="fault-injected", severity=Severity.INFO, title=f"a fault was injected on purpose (--fault {spec}): the findings below are about it",
            evidence={"fault": spec}, why=why("fault-injected"), fix=fix("fault-injected"), area="gpudoctor",
        ))  # fmt: skip
    if ignored:
        out.append(Finding(
            id="fault-injected", severity=Severity.INFO, title=f"{FAULT_ENV}={ignored} in the environment was ignored: only --fault injects a fault",
            evidence={"ignored": f"{FAULT_ENV}={ignored}"}, why=why("fault-injected"), fix=fix("fault-injected"), area="gpudoctor",
        ))  # fmt: skip
    return out
