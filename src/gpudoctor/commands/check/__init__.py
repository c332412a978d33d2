"""`gpudoctor check`: probing is probe/, judging is checks/ (both shared with the
other commands); what is check's own is its options (options.py), its one door
(`run` below, called by the CLI and the Python API alike) and its view, the
header of facts above the findings (view.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudoctor.commands.check.options import Options
    from gpudoctor.core.findings import Report

COMMAND = "check"


def run(options: "Options", *, progress: Callable[[Any], None] | None = None) -> "Report":
    """Probe this machine, or read the saved snapshots, and judge them; several
    snapshots, or the nodes of a torchrun/SLURM job, are compared as one job.
    Bad input raises UsageError. `progress(wait)` hears a joined rank 0 waiting
    for its peers. A rank that does not report (rank 0 does) gets a QuietReport."""
    from pathlib import Path

    from gpudoctor.commands.check.options import check_options
    from gpudoctor.core.codec import SnapshotError
    from gpudoctor.core.findings import Report, Severity
    from gpudoctor.core.quiet import QuietReport
    from gpudoctor.core.unavailable import Unavailable
    from gpudoctor.core.usage import UsageError
    from gpudoctor.launch.join_env import read_join_env
    from gpudoctor.launch.fleet import joinable, one_node
    from gpudoctor.launch.launcher_watch import watch_launcher
    from gpudoctor.launch.rank import join_context
    from gpudoctor.probe.facts import collect, load

    check_options(options)
    if options.facts:
        try:
            snapshots = [load(path) for path in options.facts]
        except SnapshotError as exc:
            raise UsageError(str(exc)) from None
        if len(snapshots) > 1:
            # A snapshot saved before the host probe existed is named after its file.
            names = [None if not isinstance(f.host, Unavailable) else Path(p).stem for f, p in zip(snapshots, options.facts)]
            return _fleet_report(snapshots, names, [() for _ in snapshots])
        return _node_report(snapshots[0])

    # A launcher variable that is not a number, or a MASTER_ADDR/MASTER_PORT that cannot
    # be met, is the report; a partial set is not (the machine is checked, and the
    # environment checks say so).
    decision = read_join_env(COMMAND, nproc_given=False)
    stopping = tuple(f for f in decision.findings if f.severity is Severity.ERROR and f.id != "distributed-env-incomplete")
    if stopping:
        return Report(COMMAND, stopping)
    ctx = join_context() if decision.join else None
    watch_launcher(ctx)  # a rank whose torchrun agent is killed stops and says so
    if ctx is not None and joinable(ctx):
        if not one_node(ctx):
            return _check_joined(ctx, options, progress)
        if ctx.rank != 0:  # one node: rank 0 checks it, alone
            return QuietReport(COMMAND, ())
    from gpudoctor.checks import all_checks

    all_checks()  # their imports now, while torch's probe (started early: cli/early.py) runs
    return _node_report(collect(visible=options.visible))


def _node_report(facts) -> "Report":
    from gpudoctor.checks import check_report
    from gpudoctor.commands.check.result import CheckReport

    report = check_report(facts)
    return CheckReport(report.command, report.findings, report.data, facts=facts)


def _fleet_report(snapshots, names, ranks) -> "Report":
    """The nodes' snapshots compared: one report for the job."""
    from gpudoctor.checks.fleet import compare_nodes, fleet_data, fleet_table
    from gpudoctor.commands.check.result import CheckReport

    nodes, findings = compare_nodes(list(zip(snapshots, names, ranks)))
    data = {**fleet_data(nodes), "snapshots": [facts.to_dict() for facts in snapshots]}
    return CheckReport(COMMAND, findings, data, table=fleet_table(nodes))


def _check_joined(ctx, options: "Options", progress) -> "Report":
    """One rank of a torchrun/srun job: local rank 0 probes its node, rank 0
    compares every node and reports; the others report nothing."""
    from gpudoctor.core.exit_code import ExitCode
    from gpudoctor.core.findings import Report
    from gpudoctor.core.quiet import QuietReport
    from gpudoctor.core.unavailable import describe_error
    from gpudoctor.hang.failures import joined_failure
    from gpudoctor.launch.fleet import gather_nodes
    from gpudoctor.launch.rank import export_slurm_env
    from gpudoctor.launch.rendezvous import RendezvousIncomplete
    from gpudoctor.probe.facts import collect

    if ctx.joined_by == "slurm":
        export_slurm_env(ctx)
    if ctx.rank == 0 and progress is not None:
        ctx.on_rendezvous_wait = progress
    try:
        nodes = gather_nodes(ctx, lambda: collect(visible=options.visible), options.timeout)
    except RendezvousIncomplete as exc:
        if ctx.rank != 0:  # rank 0 reports who never came
            return QuietReport(COMMAND, (exc.finding(),), code=ExitCode.PROBLEM)
        return Report(COMMAND, (exc.finding(),))
    except Exception as exc:  # the ranks could not meet: one line, not a traceback from inside c10d
        said = (
            f"gpudoctor: rank {ctx.rank}: the ranks of this {ctx.joined_by} job could not compare their nodes "
            f"within {options.timeout:.0f} s: {describe_error(exc)}"
        )
        failed = joined_failure(ctx, exc, " while comparing the nodes", "check")
        if ctx.rank == 0:  # the rank that reports: its failure is the report (--json too), as allreduce's
            return Report(COMMAND, (failed,))
        return QuietReport(COMMAND, (failed,), said=said, code=ExitCode.PROBLEM)
    if nodes is None:
        return QuietReport(COMMAND, ())  # not rank 0: rank 0 reports
    if len(nodes) == 1:
        return _node_report(nodes[0].facts)
    return _fleet_report([n.facts for n in nodes], [None] * len(nodes), [n.ranks for n in nodes])
