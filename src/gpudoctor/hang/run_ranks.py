"""The one way a command runs its rank function: locally, as N ranks started and
watched by the supervisor, or joined, as this process being one rank of a
torchrun/SLURM job. allreduce and train-smoke go through here; what the ranks
return and how it is verified stays with the command."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from gpudoctor.core.findings import Finding, Report
from gpudoctor.hang.failures import joined_failure, launch_findings, segfaulted
from gpudoctor.hang.verdict import RankRecord, rank_records, root_cause
from gpudoctor.hang.watch import CollectiveWatch, collective_findings, job_traces
from gpudoctor.launch.fleet import FleetComparison, JobComparison
from gpudoctor.launch.rank import RankContext, export_slurm_env
from gpudoctor.launch.rendezvous import RendezvousIncomplete, StoreNotAnswering
from gpudoctor.launch.supervisor import LaunchResult, ProgressCallback, RankOutcome, discard_run_dir, launch_function


@dataclass(frozen=True)
class LocalRun:
    """The supervised ranks' result and the launcher's findings about it (one per
    failed rank, root cause first; empty when every rank did its work)."""

    result: LaunchResult
    findings: tuple[Finding, ...]
    ranks: tuple[RankRecord, ...] = ()  # every rank's one record (hang/verdict.py), for the JSON
    cause: RankOutcome | None = None  # the root-cause rank (hang/verdict.root_cause), if one
    cause_kind: str = ""  # what it is (verdict.Cause.kind)

    def ranks_json(self) -> list[dict]:
        """The `ranks` list of the command's JSON; empty when every rank did its work."""
        return [] if self.result.ok else [asdict(r) for r in self.ranks]

    def root_json(self) -> dict | None:
        """The `root_cause` of the command's JSON: the rank the report names first."""
        return {"rank": self.cause.rank, "kind": self.cause_kind} if self.cause is not None else None

    def discard_logs(self) -> None:
        """Remove the run folder: call it when nothing in it needs keeping."""
        discard_run_dir(self.result)


def run_local(
    target: str,
    config: Any,
    nproc: int,
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    on_progress: ProgressCallback | None = None,
    run_dir: str | None = None,
    result_type: type | None = None,
) -> LocalRun:
    """Start `nproc` supervised ranks of `target` ("package.module:function",
    called as fn(ctx, config), `config` the command's frozen dataclass) on this host and wait for all of them. Each
    rank's return value comes back as `result_type` (the frozen dataclass fn
    returns), through the one codec."""
    result = launch_function(
        target,
        config,
        nproc,
        timeout=timeout,
        env=env,
        on_progress=on_progress,
        run_dir=run_dir,
        result_type=result_type,
        rank_setup="gpudoctor.hang.tracer:install_rank",
        # Mismatches and uneven work stop the job at once; a stall is left to the
        # command's own --timeout watchdog, then explained from the traces.
        watch_factory=lambda folder, n: CollectiveWatch(folder, n, hang_timeout=None),
    )
    if result.ok:
        return LocalRun(result, ())
    traces = job_traces(result)
    collective = collective_findings(result, traces)
    found = root_cause(result, traces, collective)
    cause = next((o for o in result.ranks if found is not None and o.rank == found.rank), None)
    findings = (*launch_findings(result, machine_gpus(result), traces, collective), *collective)
    return LocalRun(result, findings, rank_records(result, traces), cause, found.kind if found else "")


def machine_gpus(result: LaunchResult) -> int | None:
    """CUDA devices this machine's torch sees, asked only when a rank segfaulted
    (the one failure whose likely cause depends on it); None otherwise. A CPU-only
    torch's answer (none) is read from its version file: importing it here would cost
    the user ~2 s of the report, after the ranks already paid for theirs."""
    if not segfaulted(result):
        return None
    from gpudoctor.probe.cuda import probe_cuda

    return probe_cuda(quick=True).device_count


@dataclass(frozen=True)
class JoinedRun:
    """This rank's part of a torchrun/SLURM job: what the rank function
    returned, or (rank 0 only) the finding its exception became."""

    value: Any = None
    failure: Finding | None = None
    raised: str = ""  # the exception's type name when rank 0's function raised
    fleet: FleetComparison | None = None  # rank 0 of a multi-node job: the nodes compared first

    def with_fleet(self, report: Report) -> Report:
        """The command's report with the nodes' comparison first (findings) and
        under `fleet` (JSON): a failure is read beside the skew that explains it."""
        if self.fleet is None:
            return report
        from gpudoctor.checks.fleet import fleet_data

        return replace(report, findings=(*self.fleet.findings, *report.findings), data={**report.data, "fleet": fleet_data(self.fleet.nodes)})


def run_joined(
    ctx: RankContext,
    rank_fn: Callable[..., Any],
    *args: Any,
    command: str,
    progress: Callable[[], str] = lambda: "",
    **kwargs: Any,
) -> JoinedRun:
    """Run rank_fn(ctx, *args, **kwargs) in this process. No supervisor here: the
    process group's own timeout is the watchdog. Another rank's exception
    propagates (the launcher reports its traceback); rank 0's becomes a finding,
    with `progress()` saying how far it got and `command` (allreduce, check, train-smoke) naming
    what to run instead (the kind's fix case)."""
    if ctx.joined_by == "slurm":
        export_slurm_env(ctx)
    # On several nodes, compare them first thing after the rendezvous (another NCCL,
    # driver, interface, ...): when the work then fails or crawls, the report shows why beside it.
    comparison = JobComparison(ctx)
    ctx.after_join = comparison.after_join
    try:
        return JoinedRun(value=rank_fn(ctx, *args, **kwargs), fleet=comparison.result)
    except (RendezvousIncomplete, StoreNotAnswering) as exc:
        if ctx.rank != 0:
            raise
        return JoinedRun(failure=exc.finding(), raised=type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - rank 0's failure is its report
        if ctx.rank != 0:
            raise
        failure = joined_failure(ctx, exc, progress(), command, other_nodes(ctx, comparison.result))
        return JoinedRun(failure=failure, raised=type(exc).__name__, fleet=comparison.result)


def other_nodes(ctx: RankContext, fleet: FleetComparison | None) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    """(address, node, its ranks) of every node but this rank's own, as the job's comparison saw them."""
    if fleet is None:
        return ()
    return tuple((address, node.name, node.ranks) for address, node in fleet.addresses if ctx.rank not in node.ranks)
