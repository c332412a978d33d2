"""gpudoctor lint: distributed-training pitfalls found in the source, before it runs.

Imports nothing heavy: the linter is pure `ast` work and never imports torch.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from gpudoctor.cli.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, emit, usage_error

FORMATS = ("text", "json", "sarif", "github")


def _ids(values: list[str]) -> list[str]:
    # `--select a,b --select c` -> [a, b, c]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint(
        paths: Optional[List[str]] = typer.Argument(
            None, metavar="PATH...", help="Files or directories (every *.py inside, hidden and virtualenv folders skipped)."
        ),
        select: List[str] = typer.Option([], "--select", metavar="ID,...", help="Run only these rules."),
        ignore: List[str] = typer.Option([], "--ignore", metavar="ID,...", help="Skip these rules."),
        format: str = typer.Option("text", "--format", metavar="text|json|sarif|github", help="Output format."),
        json_out: bool = JsonOpt,
        explain: Optional[str] = typer.Option(None, "--explain", metavar="ID", help="Print a rule's page and exit."),
    ) -> None:
        """Find distributed-training pitfalls in scripts before they run (exit 1 if any)."""
        from gpudoctor.lint import engine, formats
        from gpudoctor.lint.explain import rule_page
        from gpudoctor.lint.rules import BY_ID

        known = ", ".join(BY_ID)
        if explain is not None:
            if explain not in BY_ID:
                usage_error(f"unknown rule id {explain!r} (known: {known})")
            print(rule_page(BY_ID[explain]), end="")
            raise typer.Exit(ExitCode.OK)
        if format not in FORMATS:
            usage_error(f"unknown format {format!r}: choose one of {', '.join(FORMATS)}")
        if json_out:
            if format not in ("text", "json"):
                usage_error("choose one of --json and --format")
            format = "json"
        if not paths:
            usage_error("give at least one PATH to lint (or --explain ID)")
        try:
            result = engine.lint_paths(paths, _ids(select), _ids(ignore))
        except engine.UnknownRule as exc:
            usage_error(f"unknown rule id {str(exc)!r} (known: {known})")
        except engine.MissingPath as exc:
            usage_error(str(exc))

        if result.files == 0:
            # A mistyped folder in CI would otherwise pass as clean, every time.
            import sys

            sys.stderr.write(f"gpudoctor lint: warning: no Python files under {', '.join(paths)} (nothing was checked)\n")
        if format == "json":
            emit(formats.report(result), json_out=True)
        if format == "sarif":
            print(formats.sarif(result))
        elif format == "github":
            annotations = formats.github(result)
            if annotations:
                print(annotations)
        else:
            print(formats.text(result))
        raise typer.Exit(ExitCode.OK if result.ok else ExitCode.PROBLEM)
