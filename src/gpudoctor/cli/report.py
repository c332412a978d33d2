"""gpudoctor report: one Markdown file for a bug report (check, a short
allreduce, a short train-smoke). Every step runs whatever the others do."""

from __future__ import annotations

from typing import List, Optional

import typer

from gpudoctor.commands.report.options import MIN_TIMEOUT_S, Options
from gpudoctor.launch.capacity import MAX_LOCAL_RANKS
from gpudoctor.core.exit_code import ExitCode, steps_exit
from gpudoctor.cli.output import Heartbeat, HtmlOpt, err


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        output: str = typer.Option(Options.output, "--output", "-o", metavar="FILE", help="Where to write the Markdown report."),
        nproc: int = typer.Option(Options.nproc, "--nproc", min=1, max=MAX_LOCAL_RANKS, help="Ranks for the allreduce and train-smoke steps."),
        timeout: float = typer.Option(Options.timeout, "--timeout", min=MIN_TIMEOUT_S, help="Watchdog of each multi-rank step, in seconds."),
        skip: List[str] = typer.Option(list(Options.skip), "--skip", metavar="STEP,...", help="Leave out steps: allreduce, train-smoke."),
        html: Optional[str] = HtmlOpt,
    ) -> None:
        """Write one Markdown file for a bug report: facts, findings and figures of
        check, a short allreduce and a short train-smoke (exit 1 if any has a problem)."""
        from gpudoctor.commands import report as command
        from gpudoctor.commands.report.document import status
        from gpudoctor.commands.report.options import validate

        skipped = tuple(dict.fromkeys(part.strip() for value in skip for part in value.split(",") if part.strip()))
        options = validate(Options(output=output, nproc=nproc, timeout=timeout, skip=skipped, html=html))  # fail now, not after a minute of steps
        with Heartbeat("report") as beat:

            def step(name: str) -> None:
                err.print(f"gpudoctor report: {name} …")
                beat.status = lambda: name

            written = command.run(options, progress=step)
        if written.error:
            err.print(f"gpudoctor report: could not write the report: {written.error}", markup=False, highlight=False)
            raise typer.Exit(ExitCode.PROBLEM)
        line = ", ".join(f"{r.name} {status(r)}" for r in written.results)
        if options.skip:
            line += f"; skipped: {', '.join(options.skip)}"
        if options.html and not written.html_error:
            line += f"; HTML: {options.html}"
        print(f"Wrote {written.path}: {line}")
        if written.html_error:
            err.print(written.html_error, markup=False, highlight=False)
            raise typer.Exit(ExitCode.PROBLEM)
        raise typer.Exit(steps_exit(written.results))
