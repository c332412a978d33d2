"""gpudoctor report: one Markdown file for a bug report (check, a short
allreduce, a short train-smoke). Every step runs whatever the others do."""

from __future__ import annotations

from typing import List

import typer

from gpudoctor.core.exit_code import ExitCode, steps_exit
from gpudoctor.cli.output import err, usage_error


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        output: str = typer.Option("gpudoctor-report.md", "--output", "-o", metavar="FILE", help="Where to write the Markdown report."),
        nproc: int = typer.Option(2, "--nproc", min=1, max=256, help="Ranks for the allreduce and train-smoke steps."),
        timeout: float = typer.Option(120.0, "--timeout", min=1.0, help="Watchdog of each multi-rank step, in seconds."),
        skip: List[str] = typer.Option([], "--skip", metavar="STEP,...", help="Leave out steps: allreduce, train-smoke."),
    ) -> None:
        """Write one Markdown file for a bug report: facts, findings and figures of
        check, a short allreduce and a short train-smoke (exit 1 if any has a problem)."""
        from pathlib import Path

        from gpudoctor.commands.report.document import document, status
        from gpudoctor.commands.report.steps import STEP_NAMES, plan, run_steps

        skipped = {part.strip() for value in skip for part in value.split(",") if part.strip()}
        unknown = skipped - set(STEP_NAMES[1:])
        if unknown:
            usage_error(f"--skip {', '.join(sorted(unknown))}: choose from allreduce, train-smoke")
        from gpudoctor.core.user_file import FileRefused, check_writable, output_error, write_output

        target = Path(output).expanduser()
        try:
            check_writable(output)  # fail now, not after a minute of steps
        except FileRefused as exc:
            usage_error(f"--output {exc}")

        steps = [s for s in plan(nproc, timeout) if s.name not in skipped]
        results = run_steps(steps, on_start=lambda step: err.print(f"gpudoctor report: {step.name} …"))
        try:
            write_output(str(target), document(results))
        except OSError as exc:
            err.print(f"gpudoctor report: could not write the report: {output_error(str(target), exc)}", markup=False, highlight=False)
            raise typer.Exit(ExitCode.PROBLEM) from None
        line = ", ".join(f"{r.name} {status(r)}" for r in results)
        print(f"Wrote {target}: {line}")
        raise typer.Exit(steps_exit(results))
