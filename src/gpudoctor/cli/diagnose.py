"""gpudoctor diagnose: a log in, the cause and the fix out.

Imports nothing heavy: reading a log never needs torch.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from gpudoctor.commands.diagnose.options import Options
from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, MarkdownOpt, StrictOpt, check_formats, emit


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose(
        path: Optional[str] = typer.Argument(Options.path, metavar="FILE|DIR|-", help="A log file, a job's run folder, or - to read a paste from stdin."),
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
        explain: Optional[str] = typer.Option(Options.explain, "--explain", metavar="ID", help="Print one failure pattern's page and exit."),
    ) -> None:
        """Read a training log and say what failed first, what it caused, and the fix (exit 1 if a problem is found)."""
        check_formats(json_out, markdown)
        from gpudoctor.commands import diagnose as command
        from gpudoctor.commands.diagnose.view import markdown_sections, rich_header

        options = Options(path=path, explain=explain)
        if explain is not None:
            print(command.explain(options), end="")
            raise typer.Exit(ExitCode.OK)
        report = command.run(options, progress=lambda line: print(line, file=sys.stderr, flush=True))
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: rich_header(report),
            markdown_sections=lambda: markdown_sections(report),
        )

