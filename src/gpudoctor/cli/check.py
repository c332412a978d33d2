"""gpudoctor check: probe this machine (or read a saved snapshot), run every
check, print the findings. Several snapshots (`--facts` once per node) are
compared as the nodes of one job. Heavy imports stay inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, MarkdownOpt, StrictOpt, check_formats, emit, usage_error, waiting_notice


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
        facts_files: Optional[list[str]] = typer.Option(
            None, "--facts", metavar="FILE",
            help="Diagnose a snapshot saved with `check --json` instead of this machine. "
            "Give it once per node to compare the nodes of a job.",
        ),
        visible: Optional[str] = typer.Option(
            None, "--visible", metavar="LIST", help="Show what torch would see with CUDA_VISIBLE_DEVICES=LIST (e.g. 1,0)."
        ),
        timeout: float = typer.Option(
            180.0, "--timeout", metavar="S", min=1.0, help="Under torchrun/srun: how long the ranks wait for each other's nodes."
        ),
    ) -> None:
        """Why can't PyTorch see or use the GPUs, and what to do about it."""
        check_formats(json_out, markdown)
        from gpudoctor.core.codec import SnapshotError
        from gpudoctor.probe.facts import collect, load
        from gpudoctor.core.unavailable import Unavailable

        if facts_files:
            if visible is not None:
                usage_error("--visible probes this machine; it cannot be combined with --facts")
            try:
                snapshots = [load(path) for path in facts_files]
            except SnapshotError as exc:
                usage_error(str(exc))
            if len(snapshots) > 1:
                # A snapshot saved before the host probe existed is named after its file.
                names = [None if not isinstance(f.host, Unavailable) else Path(p).stem for f, p in zip(snapshots, facts_files)]
                fleet_report(snapshots, names, [() for _ in snapshots], json_out, markdown, strict)
            facts = snapshots[0]
        else:
            from gpudoctor.launch.fleet import joinable, one_node

            ctx = _join_context_or_stop(json_out, markdown, strict)
            if ctx is not None and joinable(ctx):
                if not one_node(ctx):
                    check_joined(ctx, visible, timeout, json_out, markdown, strict)
                if ctx.rank != 0:  # one node: rank 0 checks it, alone
                    raise typer.Exit(ExitCode.OK)
            from gpudoctor.checks import all_checks

            all_checks()  # their imports now, while torch's probe (started early: cli/early.py) runs
            facts = collect(visible=visible)
        node_report(facts, json_out, markdown, strict)


def _join_context_or_stop(json_out: bool, markdown: bool, strict: bool):
    """The job this process is a rank of, if any. A launcher variable that is not a
    number, or a MASTER_ADDR/MASTER_PORT that cannot be met, is the report; a partial
    set is not (the machine is checked, and the environment checks say so)."""
    from gpudoctor.core.findings import Report, Severity
    from gpudoctor.launch.environment import read_join_env
    from gpudoctor.launch.rank import join_context

    decision = read_join_env("check", nproc_given=False)
    stopping = tuple(f for f in decision.findings if f.severity is Severity.ERROR and f.id != "distributed-env-incomplete")
    if stopping:
        emit(Report("check", stopping), json_out=json_out, markdown=markdown, strict=strict)
    return join_context() if decision.join else None


def node_report(facts, json_out: bool, markdown: bool, strict: bool) -> NoReturn:
    """The report on one machine's facts (exits)."""
    from gpudoctor.checks import check_report
    from gpudoctor.commands.check.view import markdown_sections, rich_header

    emit(
        check_report(facts),
        json_out=json_out,
        markdown=markdown,
        strict=strict,
        rich_extra=lambda: rich_header(facts),
        markdown_sections=lambda: markdown_sections(facts),
    )


def check_joined(ctx, visible: str | None, timeout: float, json_out: bool, markdown: bool, strict: bool) -> NoReturn:
    """One rank of a torchrun/srun job: local rank 0 probes its node, rank 0
    compares every node and prints the one report; the others print nothing."""
    import sys

    from gpudoctor.core.findings import Report
    from gpudoctor.launch.fleet import gather_nodes
    from gpudoctor.launch.rendezvous import RendezvousIncomplete
    from gpudoctor.launch.rank import export_slurm_env
    from gpudoctor.probe.facts import collect
    from gpudoctor.core.unavailable import describe_error

    if timeout <= 0:
        usage_error("--timeout must be positive")
    if ctx.joined_by == "slurm":
        export_slurm_env(ctx)
    if ctx.rank == 0:
        ctx.on_rendezvous_wait = waiting_notice("check")
    try:
        nodes = gather_nodes(ctx, lambda: collect(visible=visible), timeout)
    except RendezvousIncomplete as exc:
        if ctx.rank != 0:
            raise typer.Exit(ExitCode.PROBLEM) from None
        emit(Report("check", (exc.finding(),)), json_out=json_out, markdown=markdown, strict=strict)
    except Exception as exc:  # the ranks could not meet: one line, not a traceback from inside c10d
        print(f"gpudoctor: rank {ctx.rank}: the ranks of this {ctx.joined_by} job could not compare their nodes "
              f"within {timeout:.0f} s: {describe_error(exc)}", file=sys.stderr)
        raise typer.Exit(ExitCode.PROBLEM) from None
    if nodes is None:
        raise typer.Exit(ExitCode.OK)  # not rank 0: rank 0 prints the report
    if len(nodes) == 1:
        node_report(nodes[0].facts, json_out, markdown, strict)
    fleet_report([n.facts for n in nodes], [None] * len(nodes), [n.ranks for n in nodes], json_out, markdown, strict)


def fleet_report(snapshots, names, ranks, json_out: bool, markdown: bool, strict: bool) -> NoReturn:
    """Compare the nodes' snapshots and print one report (exits)."""
    from gpudoctor.checks.fleet import compare_nodes, fleet_data, fleet_table
    from gpudoctor.core.findings import Report
    from gpudoctor.render.fleet_table import markdown_fleet, rich_fleet

    nodes, findings = compare_nodes(list(zip(snapshots, names, ranks)))
    data = {**fleet_data(nodes), "snapshots": [facts.to_dict() for facts in snapshots]}
    table = fleet_table(nodes)
    emit(
        Report("check", findings, data),
        json_out=json_out,
        markdown=markdown,
        strict=strict,
        rich_extra=lambda: rich_fleet(table),
        markdown_sections=lambda: markdown_fleet(table),
    )
