"""gpudoctor diagnose: a log in, the cause and the fix out.

Imports nothing heavy: reading a log never needs torch.
"""

from __future__ import annotations

from typing import Optional

import typer

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, MarkdownOpt, StrictOpt, check_formats, emit, usage_error


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose(
        path: Optional[str] = typer.Argument(None, metavar="FILE|DIR|-", help="A log file, a job's run folder, or - to read a paste from stdin."),
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
        explain: Optional[str] = typer.Option(None, "--explain", metavar="ID", help="Print one failure pattern's page and exit."),
    ) -> None:
        """Read a training log and say what failed first, what it caused, and the fix (exit 1 if a problem is found)."""
        check_formats(json_out, markdown)
        if explain is not None:
            from gpudoctor.commands.diagnose.explain import pattern_page
            from gpudoctor.knowledge.patterns import BY_ID

            if explain not in BY_ID:
                usage_error(f"unknown pattern id {explain!r} (see docs/patterns/ or `gpudoctor diagnose --explain` with one of: {', '.join(sorted(BY_ID))})")
            print(pattern_page(BY_ID[explain]), end="")
            raise typer.Exit(ExitCode.OK)
        if path is None:
            usage_error("give a log FILE, a run folder DIR, or - for stdin (or --explain ID)")
        from gpudoctor.commands.diagnose.inputs import InputError, resolve
        from gpudoctor.commands.diagnose.analyse import diagnose as run
        from gpudoctor.commands.diagnose.view import markdown_sections, rich_header

        if path == "-" and _stdin_is_terminal():
            # Otherwise the command just waits, and looks hung.
            import sys

            end = "Ctrl-Z then Enter" if sys.platform == "win32" else "Ctrl-D"
            sys.stderr.write(f"gpudoctor diagnose: paste the log, then press {end} on a new line\n")
        try:
            report = run(resolve(path))
        except InputError as exc:
            usage_error(str(exc))
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: rich_header(report),
            markdown_sections=lambda: markdown_sections(report),
        )


def _stdin_is_terminal() -> bool:
    import sys

    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # no stdin at all, or closed
        return False
