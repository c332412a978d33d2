"""One `gpudoctor allreduce` run, start to report: the checks before launch, the
supervised ranks (or this process as one rank of a torchrun/SLURM job), the
NCCL narrowing reruns when NCCL hangs or errors, and the Report.

Nothing here prints: what the user should see while it runs goes through Hooks,
which the CLI turns into a progress bar and a live table on stderr.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gpudoctor.commands.allreduce.rank import ROWS_FILE, SweepResult, read_row
from gpudoctor.commands.allreduce.bisect import bisect_bytes, bisect_findings
from gpudoctor.commands.allreduce.per_node import node_findings, per_node_json
from gpudoctor.commands.allreduce.options import Sweep
from gpudoctor.commands.allreduce.bandwidth import Row, format_size, public_row, summarize
from gpudoctor.commands.allreduce.verify import (
    Attempt,
    check_bandwidth,
    check_correctness,
    check_latency_noise,
    check_link_speed,
    check_shm,
    failing_size_index,
    narrowing_verdict,
    next_attempt,
    should_narrow,
)
from gpudoctor.core.findings import Finding, Report
from gpudoctor.core.user_file import read_tail
from gpudoctor.launch import rundir
from gpudoctor.probe.links import LinkFacts, link_facts
from gpudoctor.probe.system import shm_total_bytes

TARGET = "gpudoctor.commands.allreduce.rank:run_rank"
RERUN_TIMEOUT_S = 60.0  # each narrowing rerun is one size with a few iterations
RERUN_ITERS = 5
PG_TIMEOUT_MARGIN_S = 60.0  # locally the supervisor's watchdog must fire before gloo's/NCCL's own
NARROWING_LOG = rundir.NARROWING_LOG


def _noop(*_args) -> None:
    return None


@dataclass
class Hooks:
    """What the CLI wants to hear while the run goes on (all optional)."""

    on_stage: Callable[[int, str, int], None] = _noop  # rank, stage, step (heartbeats)
    on_row: Callable[[Row], None] = _noop  # a size is done: its results row
    on_note: Callable[[str], None] = _noop  # a line for the user (narrowing reruns)
    on_wait: Callable[..., None] = _noop  # joined rank 0 waits for its peers (launch/rendezvous's wait)


@dataclass(frozen=True)
class JobOutcome:
    report: Report
    rows: tuple[Row, ...] = field(default_factory=tuple)


# ---- local mode


class _RowFollower:
    """Reads the rows rank 0 appends to the run folder while the sweep runs."""

    def __init__(self, path: str, on_row: Callable[[Row], None]):
        self.path, self.on_row = path, on_row
        self.offset = 0
        self.rows: list[Row] = []

    def poll(self) -> None:
        try:
            with open(self.path) as fh:
                fh.seek(self.offset)
                text = fh.read()
        except OSError:
            return
        complete = text[: text.rfind("\n") + 1]
        self.offset += len(complete.encode())
        for line in complete.splitlines():
            try:
                row = read_row(line)
            except ValueError:  # SnapshotError is one: another gpudoctor's line
                continue
            self.rows.append(row)
            self.on_row(row)


def _supervised(sweep: Sweep, hooks: Hooks, env: dict[str, str], timeout_s: float):
    from gpudoctor.hang.run_ranks import run_local as run_ranks

    run_dir = tempfile.mkdtemp(prefix="gpudoctor-allreduce-")
    follower = _RowFollower(os.path.join(run_dir, ROWS_FILE), hooks.on_row)

    def on_progress(rank: int, stage: str, step: int) -> None:
        hooks.on_stage(rank, stage, step)
        if rank == 0:
            follower.poll()

    ranks_sweep = sweep.with_changes(pg_timeout_s=timeout_s + PG_TIMEOUT_MARGIN_S)
    run = run_ranks(
        TARGET, ranks_sweep, sweep.nproc, timeout=timeout_s, env=env, on_progress=on_progress, run_dir=run_dir, result_type=SweepResult
    )
    follower.poll()
    first: SweepResult | None = run.result.ranks[0].result if run.result.ranks else None
    rows = list(first.rows) if first is not None else follower.rows
    devices = first.devices if first is not None else None
    return run, rows, devices, first.pairs if first is not None else ()


def _debug_env(sweep: Sweep) -> dict[str, str]:
    """NCCL's INFO log costs nothing at run time and goes to each rank's stdout
    file in the run folder: there when a failure needs it."""
    if sweep.backend == "nccl" and "NCCL_DEBUG" not in os.environ:
        return {"NCCL_DEBUG": "INFO"}
    return {}


def run_local(sweep: Sweep, hooks: Hooks | None = None) -> JobOutcome:
    """Start sweep.nproc ranks on this host, supervise them, and report."""
    hooks = hooks or Hooks()
    started = time.monotonic()
    prechecks = check_shm(shm_total_bytes(), sweep.backend, sweep.nproc)
    run, rows, devices, pairs = _supervised(sweep, hooks, _debug_env(sweep), sweep.timeout_s)
    result = run.result
    findings = list(run.findings)
    narrowing: list[dict] = []
    interrupted = result.interrupted
    if should_narrow(sweep.backend, not result.ok, result.interrupted):
        verdict, narrowing, interrupted = _narrow(sweep, result, hooks, run.cause)
        if verdict is not None:
            findings.append(verdict)
    link = link_facts(devices)
    findings += _result_findings(sweep, rows, link)
    findings += bisect_findings(pairs, devices, bisect_bytes(sweep.device))
    findings += prechecks
    keep_logs = not result.ok or any(r.wrong for r in rows) or bool(narrowing)
    if not keep_logs:
        run.discard_logs()
    report = _report(
        sweep,
        rows,
        findings,
        mode="local",
        elapsed_s=time.monotonic() - started,
        logs=result.run_dir if keep_logs else None,
        link=link,
        narrowing=narrowing,
        interrupted=interrupted,
        stop_signal=result.stop_signal,
        pairs=pairs,
        ranks=run.ranks_json(),
        root=run.root_json(),
        threads=result.threads(),
    )
    return JobOutcome(report, tuple(rows))


def _narrow(sweep: Sweep, result, hooks: Hooks, cause) -> tuple[Finding | None, list[dict], bool]:
    """Rerun the failing size with P2P off, then SHM off, then on gloo; stop at
    the first that works. The failing rank's NCCL_DEBUG=INFO output of every run
    goes into one log in the first run's folder."""
    planned = sweep.planned()
    index = failing_size_index([r.step for r in result.ranks], len(planned))
    nbytes = planned[index][0]
    failing_rank = cause.rank if cause else 0
    log = os.path.join(result.run_dir, NARROWING_LOG)
    _append_log(log, f"original run ({sweep.backend})", result, failing_rank)
    done: list[tuple[Attempt, bool]] = []
    record: list[dict] = []
    quiet = Hooks(on_note=hooks.on_note)
    while (attempt := next_attempt(done)) is not None:
        hooks.on_note(f"NCCL failed at {format_size(nbytes)}: rerunning that size with {attempt.label}")
        sub = sweep.with_changes(
            sizes=(nbytes,),
            iters=min(sweep.iters, RERUN_ITERS),
            warmup=1,
            backend=attempt.backend,
            device="cpu" if attempt.backend == "gloo" else sweep.device,
        )
        env = {**_debug_env(sub), **attempt.env}
        run, rows, _, _ = _supervised(sub, quiet, env, min(sweep.timeout_s, RERUN_TIMEOUT_S))
        rerun = run.result
        worked = rerun.ok and bool(rows) and not any(r.wrong for r in rows)
        done.append((attempt, worked))
        record.append({"rerun": attempt.label, "works": worked, "elapsed_s": round(rerun.elapsed_s, 1)})
        _append_log(log, attempt.label, rerun, failing_rank)
        run.discard_logs()
        if rerun.interrupted:  # Ctrl-C during a rerun: say so (exit 130), not a verdict
            return run.findings[0], record, True
    return narrowing_verdict(done, nbytes, log), record, False


def _append_log(path: str, title: str, result, rank: int) -> None:
    """One section per run: the failing rank's stdout (NCCL's INFO lines) and stderr."""
    parts = [f"===== {title}: rank {rank}, {'ok' if result.ok else 'failed'} =====\n"]
    for stream, rank_log in (("stdout", rundir.stdout_path), ("stderr", rundir.stderr_path)):
        try:
            text = read_tail(rank_log(result.run_dir, rank), 200_000)[0].decode("utf-8", "replace")
        except (OSError, ValueError):  # FileRefused is a ValueError
            text = ""
        parts.append(f"--- rank {rank} {stream} ---\n{text}\n")
    try:
        with open(path, "a") as fh:
            fh.writelines(parts)
    except OSError:
        pass  # the log is a courtesy; the findings stand without it


# ---- join mode


def run_joined(ctx, sweep: Sweep, hooks: Hooks | None = None) -> JobOutcome | None:
    """Run this process as one rank of a torchrun/SLURM job. Rank 0 returns the
    report of the whole job; other ranks return None (or raise)."""
    from gpudoctor.commands.allreduce.rank import run_rank
    from gpudoctor.hang.run_ranks import run_joined as run_as_rank

    hooks = hooks or Hooks()
    started = time.monotonic()
    rows: list[Row] = []

    def on_row(row: Row) -> None:
        rows.append(row)
        hooks.on_row(row)

    # No supervisor here: the process group's own timeout (plan_sweep's pg_timeout_s) is the watchdog.
    joined = run_as_rank(
        ctx,
        run_rank,
        sweep,
        on_row=on_row if ctx.rank == 0 else None,
        progress=lambda: f" after {len(rows)} of {len(sweep.planned())} size(s)",
        command="allreduce",
    )
    devices = joined.value.devices if joined.value is not None else None
    findings: list[Finding] = [joined.failure] if joined.failure else []
    if ctx.rank != 0:
        return None
    link = link_facts(devices)
    pairs = joined.value.pairs if joined.value is not None else ()
    per_node = joined.value.per_node if joined.value is not None else None
    findings += _result_findings(sweep, rows, link)
    findings += bisect_findings(pairs, devices, bisect_bytes(sweep.device))
    findings += node_findings(per_node)
    findings += check_shm(shm_total_bytes(), sweep.backend, ctx.local_world_size)
    report = _report(
        sweep, rows, findings, mode=ctx.joined_by, elapsed_s=time.monotonic() - started, logs=None, link=link, narrowing=[],
        pairs=pairs, per_node=per_node,
    )
    return JobOutcome(joined.with_fleet(report), tuple(rows))


# ---- the report


def _result_findings(sweep: Sweep, rows: list[Row], link: LinkFacts | None) -> list[Finding]:
    planned = len(sweep.planned())
    summary = summarize(rows, planned)
    out = check_correctness(rows, planned, sweep.nproc)
    out += check_bandwidth(summary, sweep.nproc)
    out += check_latency_noise(summary, _load_average(), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    out += check_link_speed(summary, sweep.nproc, link)
    return out


def _load_average() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except (OSError, AttributeError):
        return None


def _report(
    sweep: Sweep, rows: list[Row], findings, *, mode, elapsed_s, logs, link, narrowing, interrupted=False, stop_signal=0,
    pairs=(), ranks: list[dict] | None = None, root: dict | None = None, threads: dict | None = None, per_node=None,
) -> Report:
    """`ranks`, `root`: every rank's record (hang/verdict.RankRecord) and the root cause
    of a local run that failed."""
    summary = summarize(rows, len(sweep.planned()))
    summary.update(
        op=sweep.op,
        dtype=sweep.dtype,
        iters=sweep.iters,
        warmup=sweep.warmup,
        timeout_s=sweep.timeout_s,
        mode=mode,
        elapsed_s=round(elapsed_s, 2),
        logs=logs,
    )
    if link is not None:
        summary["link"] = {
            "kind": link.kind,
            "nvlinks_min": link.nvlinks_min,
            "topology": list(link.topology),
            "p2p": list(link.p2p),
            "gpus": list(link.gpus),
            "hosts": link.hosts,
        }
    if narrowing:
        summary["narrowing"] = narrowing
    if sweep.rounding():
        summary["rounded_sizes"] = sweep.rounding()
    data = {
        "backend": sweep.backend,
        "device": sweep.device,
        "nproc": sweep.nproc,
        "results": [public_row(r) for r in rows],
        "summary": summary,
    }
    if threads:
        data["threads"] = threads  # local ranks: what they ran with (launch/threads.py)
    if ranks:
        data["ranks"] = ranks
        data["root_cause"] = root
    if per_node is not None:  # across nodes only
        data["per_node"] = per_node_json(per_node)
    if sweep.bisect:
        # held_us: what the verdict compares (the faster pass), so a reader need not re-derive it
        data["bisect"] = [
            {"ranks": [p.a, p.b], "us": p.us, "repeat_us": p.repeat_us, "recheck_us": p.recheck_us or None, "held_us": p.held_us}
            for p in pairs
        ]
    return Report(command="allreduce", findings=tuple(findings), data=data, interrupted=interrupted, stop_signal=stop_signal)
