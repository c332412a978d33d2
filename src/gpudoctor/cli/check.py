"""gpudoctor check: probe this machine (or read a saved snapshot), run every
check, print the findings. Several snapshots (`--facts` once per node) are
compared as the nodes of one job. Heavy imports stay inside the command."""

from __future__ import annotations

from typing import Optional

import typer

from gpudoctor.commands.check.options import MIN_TIMEOUT_S, Options
from gpudoctor.cli.output import (
    JsonOpt,
    MarkdownOpt,
    StrictOpt,
    check_formats,
    emit,
    exit_if_quiet,
    usage_error,
    waiting_notice,
)


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
            Options.visible, "--visible", metavar="LIST", help="Show what torch would see with CUDA_VISIBLE_DEVICES=LIST (e.g. 1,0)."
        ),
        timeout: float = typer.Option(
            Options.timeout, "--timeout", metavar="S",
            help=f"Under torchrun/srun: how long the ranks wait for each other's nodes (at least {MIN_TIMEOUT_S:g}).",
        ),
        verbose: bool = typer.Option(False, "-v", "--verbose", help="Also show the evidence behind every passed check."),
        list_checks: bool = typer.Option(False, "--list-checks", help="List what check examines (each area's finding ids) and exit."),
    ) -> None:
        """Why can't PyTorch see or use the GPUs, and what to do about it."""
        if list_checks:
            _list_checks()
        check_formats(json_out, markdown)
        from gpudoctor.commands.check import run
        from gpudoctor.commands.check.result import CheckReport
        from gpudoctor.core.usage import UsageError

        try:
            options = Options(facts=tuple(facts_files or ()), visible=visible, timeout=timeout)
            report = run(options, progress=waiting_notice("check"))
        except UsageError as exc:
            usage_error(str(exc))
        exit_if_quiet(report, strict)
        facts = report.facts if isinstance(report, CheckReport) else None
        table = report.table if isinstance(report, CheckReport) else None
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: _rich_extra(facts, table),
            markdown_sections=lambda: _markdown_sections(facts, table),
            verbose=verbose,
        )


def _list_checks() -> None:
    """Every finding `check` can report, by area, from the catalog (docs/findings/ has each page)."""
    from gpudoctor.catalog.findings import FINDINGS
    from gpudoctor.core.exit_code import ExitCode

    areas: dict[str, list] = {}
    for entry in FINDINGS.values():
        if "gpudoctor check" in entry.emitted_by:
            areas.setdefault(entry.area, []).append(entry)
    for area, entries in areas.items():
        print(area)
        for e in entries:
            print(f"  {e.id:<34} {e.severity_text}")
    print(f"\n{sum(len(v) for v in areas.values())} findings in {len(areas)} areas; each has a page: docs/findings/<id>.md")
    raise typer.Exit(ExitCode.OK)


def _rich_extra(facts, table) -> list:
    """Above the findings: the facts of the one node checked, or the nodes x facts table."""
    if facts is not None:
        from gpudoctor.commands.check.view import rich_header

        return list(rich_header(facts))
    if table is not None:
        from gpudoctor.render.fleet_table import rich_fleet

        return list(rich_fleet(table))
    return []


def _markdown_sections(facts, table) -> list[str]:
    if facts is not None:
        from gpudoctor.commands.check.view import markdown_sections

        return list(markdown_sections(facts))
    if table is not None:
        from gpudoctor.render.fleet_table import markdown_fleet

        return list(markdown_fleet(table))
    return []
