"""gpudoctor lint: distributed-training pitfalls found in the source, before it runs.

Imports nothing heavy: the linter is pure `ast` work and never imports torch.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, emit, usage_error

FORMATS = ("text", "json", "sarif", "github")


def _ids(values: list[str]) -> list[str]:
    # `--select a,b --select c` -> [a, b, c]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint(
        paths: Optional[List[str]] = typer.Argument(
            None, metavar="PATH...",
            help="Files or directories (every *.py and *.ipynb inside, hidden and virtualenv folders skipped).",
        ),
        select: List[str] = typer.Option([], "--select", metavar="ID,...", help="Run only these rules."),
        ignore: List[str] = typer.Option([], "--ignore", metavar="ID,...", help="Skip these rules."),
        format: str = typer.Option("text", "--format", metavar="text|json|sarif|github", help="Output format."),
        fail_on: Optional[str] = typer.Option(
            None, "--fail-on", metavar="error|warning|never",
            help="What makes the exit status 1: errors (the default), warnings too, or nothing.",
        ),
        exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when diagnostics are found."),
        no_config: bool = typer.Option(False, "--no-config", help="Ignore [tool.gpudoctor.lint] in pyproject.toml."),
        json_out: bool = JsonOpt,
        explain: Optional[str] = typer.Option(
            None, "--explain", metavar="ID|all", help="Print a rule's page and exit (`all`: list the rules).",
        ),
    ) -> None:
        """Find distributed-training pitfalls in scripts and notebooks before they run (exit 1 on errors)."""
        from gpudoctor.linter import config
        from gpudoctor.linter import engine
        from gpudoctor.linter import formats
        from gpudoctor.linter.explain import rule_page, rule_list
        from gpudoctor.linter.rules import BY_ID

        known = ", ".join(BY_ID)
        if explain is not None:
            if explain in ("", "all"):
                print(rule_list(), end="")
                raise typer.Exit(ExitCode.OK)
            if explain not in BY_ID:
                usage_error(f"unknown rule id {explain!r} (known: {known})")
            print(rule_page(BY_ID[explain]), end="")
            raise typer.Exit(ExitCode.OK)
        if format not in FORMATS:
            usage_error(f"unknown format {format!r}: choose one of {', '.join(FORMATS)}")
        if fail_on is not None and fail_on not in config.FAIL_ON:
            usage_error(f"unknown --fail-on {fail_on!r}: choose one of {', '.join(config.FAIL_ON)}")
        if json_out:
            if format not in ("text", "json"):
                usage_error("choose one of --json and --format")
            format = "json"
        if not paths:
            usage_error("give at least one PATH to lint (or --explain ID)")
        try:
            settings = config.LintConfig() if no_config else config.find(".")
        except config.ConfigError as exc:
            usage_error(str(exc))
        chosen = _ids(select) or list(settings.select)
        try:
            result = engine.lint_paths(paths, chosen, _ids(ignore) + list(settings.ignore),
                                       exclude=settings.excluded if settings.exclude else None)
        except engine.UnknownRule as exc:
            where = f" in {settings.path}" if str(exc) in settings.select + settings.ignore else ""
            usage_error(f"unknown rule id {str(exc)!r}{where} (known: {known})")
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
        elif format == "text":
            print(formats.text(result))
        fails = "never" if exit_zero else (fail_on or settings.fail_on or "error")
        raise typer.Exit(ExitCode.PROBLEM if result.failed(fails) else ExitCode.OK)
