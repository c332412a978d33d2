"""What every command shares at the CLI edge: consoles, usage errors, and
turning a Report into output and an exit code (0 healthy, 1 problem, 2 usage)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NoReturn

import typer
from rich.console import Console, RenderableType

from gpudoctor import exit_codes
from gpudoctor.findings import Report

# Results go to stdout; progress and warnings go to stderr, so `--json | jq` works.
out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERRUPTED = (
    exit_codes.OK,
    exit_codes.PROBLEM,
    exit_codes.USAGE,
    exit_codes.INTERRUPTED,
)

JsonOpt = typer.Option(False, "--json", help="Print one JSON object on stdout (schema: docs/json.md).")
MarkdownOpt = typer.Option(False, "--markdown", help="Print a Markdown report to paste into a bug report.")
StrictOpt = typer.Option(False, "--strict", help="Also fail (exit 1) on warnings.")


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit 2."""


def usage_error(message: str) -> NoReturn:
    raise UsageError(message)


def check_formats(json_out: bool, markdown: bool) -> None:
    """Called first by each command, so a bad pair fails before any work is done."""
    if json_out and markdown:
        usage_error("choose one of --json and --markdown")


def stop_if_torch_broken(command: str, cuda, json_out: bool, markdown: bool, strict: bool) -> None:
    """A torch that fails to import is a finding that explains it (exit 1), not a traceback."""
    if cuda.import_error is None:
        return
    import os
    import sys

    from gpudoctor.checks.torch_build import torch_import_failed

    finding = torch_import_failed(cuda.import_error, python=sys.executable, PYTHONPATH=os.environ.get("PYTHONPATH"))
    emit(Report(command, (finding,)), json_out=json_out, markdown=markdown, strict=strict)


def emit(
    report: Report,
    *,
    json_out: bool = False,
    markdown: bool = False,
    strict: bool = False,
    rich_extra: Callable[[], Iterable[RenderableType]] | None = None,
    markdown_sections: Callable[[], Iterable[str]] | None = None,
) -> NoReturn:
    """Print the report in the chosen form and leave with its exit code."""
    check_formats(json_out, markdown)
    if json_out:
        from gpudoctor.render.json_out import report_json

        print(report_json(report, strict))
    elif markdown:
        from gpudoctor.render.markdown import report_markdown

        print(report_markdown(report, markdown_sections() if markdown_sections else (), strict), end="")
    else:
        from gpudoctor.render.console import print_report

        print_report(out, report, rich_extra() if rich_extra else (), strict)
    # Ctrl-C / SIGTERM during a launch: the report is printed, the exit says "interrupted".
    if any(f.id == "launch-interrupted" for f in report.findings):
        raise typer.Exit(EXIT_INTERRUPTED)
    raise typer.Exit(report.exit_code(strict))
