"""gpudoctor run: run a training script under the doctor (runtime hooks), as
`python SCRIPT ARGS` would, and say what went wrong where.

The command is commands/run (its options checked there, the CLI's usage errors): for
one process it answers with the exec of `python -m gpudoctor.hooks.main SCRIPT ARGS`,
which is carried out here, in this process's place (same pid, so torchrun's and the
shell's signals reach the script directly). `--nproc N`: N ranks through the
supervised launcher, then one merged report. Here: the live steps line, the exit.
"""

from __future__ import annotations

import os
import sys
from typing import List, NoReturn, Optional

import typer

from gpudoctor.commands.run.options import Options
from gpudoctor.cli.output import usage_error
from gpudoctor.launch.capacity import MAX_LOCAL_RANKS

RUN_CONTEXT = {
    # The script's own options pass through untouched: everything from the
    # script (or -m MODULE) on belongs to it, even `--json` or `-h`.
    "allow_extra_args": True,
    "ignore_unknown_options": True,
    "allow_interspersed_args": False,
}


def register(app: typer.Typer) -> None:
    @app.command("run", context_settings=RUN_CONTEXT)
    def run(
        target: Optional[List[str]] = typer.Argument(
            None, metavar="SCRIPT [ARGS]... | -m MODULE [ARGS]...", help="What python would run, as python takes it."
        ),
        nproc: Optional[int] = typer.Option(
            Options.nproc, "--nproc", metavar="N", help=f"Start N ranks, 1 to {MAX_LOCAL_RANKS} (gloo/NCCL env:// rendezvous on 127.0.0.1); their stdin is empty (/dev/null)."
        ),
        json_file: Optional[str] = typer.Option(
            Options.json_file, "--json", metavar="FILE", help="Also write the findings as JSON to FILE (stdout stays the script's)."
        ),
        strict: bool = typer.Option(
            Options.strict, "--strict", help="Exit 1 when the script exits 0 but a warning or an error was found."
        ),
        timeout: Optional[float] = typer.Option(
            Options.timeout,
            "--timeout",
            metavar="S",
            help="Stop the script after S seconds, printing every thread's stack.",
        ),
        hang_timeout: Optional[float] = typer.Option(
            Options.hang_timeout,
            "--hang-timeout",
            metavar="S",
            help="With --nproc: when no rank makes collective progress for S seconds while one waits in a "
            "collective, show where every rank stands and stop the job (default 600; 0: never).",
        ),
        trace: Optional[str] = typer.Option(
            Options.trace,
            "--trace",
            metavar="FILE",
            help="Write each rank's step phases and collectives to FILE as a Chrome trace (open it in "
            "ui.perfetto.dev or chrome://tracing); under torchrun every rank writes FILE.rank<N>.json.",
        ),
        html: Optional[str] = typer.Option(
            None, "--html", metavar="FILE",
            help="With --nproc: also write a self-contained HTML page (each rank's step phases, the findings) to FILE "
            "(needs the html extra, matplotlib).",
        ),
    ) -> None:
        """Run a script under the doctor: device-mismatch errors explained, DDP pitfalls caught at run time.

        Findings go to stderr at exit, prefixed by rank; the exit code is the script's.
        """
        from gpudoctor.commands import run as command

        options = Options(
            target=tuple(target or ()), nproc=nproc, json_file=json_file, strict=strict, timeout=timeout,
            hang_timeout=hang_timeout, trace=trace, html=html,
        )
        with StepsLine() as line:
            ended = command.run(options, progress=line.say, on_steps=line.update if line.live else None)
        if isinstance(ended, command.Exec):
            _exec_runtime(ended)
        raise typer.Exit(ended.status)


def _exec_runtime(plan) -> NoReturn:
    os.environ.update(plan.env)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(plan.argv[0], list(plan.argv))
    except OSError as exc:  # an interpreter that cannot be executed (mode, noexec mount, gone)
        usage_error(f"cannot start the script with {plan.argv[0] or 'python'}: {exc.strerror or exc}")


class StepsLine:
    """On a terminal, one live line under the ranks' output: steps/s and the slowest
    rank with its phase (render/step_table.py). Nothing on a pipe or a file."""

    def __init__(self) -> None:
        from gpudoctor.render.terminal import make_console

        console = make_console(stderr=True)
        self.live = None
        if console.is_terminal:
            from rich.live import Live
            from rich.text import Text

            from gpudoctor.render.step_table import status_line

            # redirect_stderr: the ranks' echoed lines print above the line, not through it.
            self.live = Live(Text(status_line(None)), console=console, transient=True, refresh_per_second=2,
                             redirect_stdout=False, redirect_stderr=True)  # fmt: skip

    def update(self, steps: dict) -> None:
        from rich.text import Text

        from gpudoctor.render.step_table import status_line

        if self.live is not None:
            # Started by the ranks' first accounting: what is said before they start
            # (too many ranks, a broken torch) prints as plain lines.
            self.live.start()  # (again: a no-op)
            self.live.update(Text(status_line(steps)))

    def say(self, text: str) -> None:
        """The command's own lines: before the ranks start, or once they have ended
        (the line is gone by then: the summary is not drawn through it)."""
        if self.live is not None:
            self.live.stop()
        sys.stderr.write(text)

    def __enter__(self) -> "StepsLine":
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.stop()
