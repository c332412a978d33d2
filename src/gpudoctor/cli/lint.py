"""gpudoctor lint: distributed-training pitfalls found in the source, before it runs.

Imports nothing heavy: the linter is pure `ast` work and never imports torch.
"""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from gpudoctor.commands.lint.options import FORMATS, Options
from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import JsonOpt, emit



def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint(
        paths: Optional[List[str]] = typer.Argument(
            None, metavar="PATH...",
            help="Files or directories (every *.py and *.ipynb inside, hidden and virtualenv folders skipped).",
        ),
        select: List[str] = typer.Option(list(Options.select), "--select", metavar="ID,...", help="Run only these rules."),
        extend_select: List[str] = typer.Option(
            list(Options.extend_select), "--extend-select", metavar="ID,...",
            help="Run these rules too (beside the default or selected ones): the opt-in advice.",
        ),
        ignore: List[str] = typer.Option(list(Options.ignore), "--ignore", metavar="ID,...", help="Skip these rules."),
        format: str = typer.Option(Options.format, "--format", metavar="|".join(FORMATS), help="Output format."),
        fail_on: Optional[str] = typer.Option(
            Options.fail_on, "--fail-on", metavar="error|warning|never",
            help="What makes the exit status 1: errors (the default), warnings too, or nothing.",
        ),
        exit_zero: bool = typer.Option(Options.exit_zero, "--exit-zero", help="Exit 0 even when diagnostics are found."),
        no_config: bool = typer.Option(not Options.config, "--no-config", help="Ignore \\[tool.gpudoctor.lint] in pyproject.toml."),
        json_out: bool = JsonOpt,
        explain: Optional[str] = typer.Option(
            Options.explain, "--explain", metavar="ID|all", help="Print a rule's page and exit (`all`, or no ID: list the rules).",
        ),
    ) -> None:
        """Find distributed-training pitfalls in scripts and notebooks before they run (exit 1 on errors)."""
        from gpudoctor.commands import lint as command
        from gpudoctor.commands.lint.options import split_ids, validate

        options = validate(Options(
            paths=tuple(paths or ()), select=split_ids(select), extend_select=split_ids(extend_select), ignore=split_ids(ignore),
            format=format, json=json_out,
            fail_on=fail_on, exit_zero=exit_zero, config=not no_config, explain=explain,
        ))  # fmt: skip
        if options.explain is not None:
            print(command.explain(options), end="")
            raise typer.Exit(ExitCode.OK)
        report = command.run(options, progress=lambda line: print(line, file=sys.stderr))
        if options.format == "json":
            emit(report, json_out=True)
        text = command.rendered(options, report)
        if text:  # github: no annotation, no line
            print(text)
        raise typer.Exit(ExitCode.PROBLEM if command.failed(options, report) else ExitCode.OK)
