"""What every command shares at the CLI edge: consoles, usage errors, and
turning a Report into output and its exit code (cli/exit_code.py)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterable
from typing import NoReturn

import typer
from rich.console import RenderableType

from gpudoctor.core import usage
from gpudoctor.core.exit_code import ExitCode, report_exit
from gpudoctor.core.findings import Report
from gpudoctor.render.terminal import make_console

# Results go to stdout; progress and warnings go to stderr, so `--json | jq` works.
out = make_console()
err = make_console(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Print one JSON object on stdout (schema: docs/json.md).")
MarkdownOpt = typer.Option(False, "--markdown", help="Print a Markdown report to paste into a bug report.")
StrictOpt = typer.Option(False, "--strict", help="Also fail (exit 1) on warnings.")
HtmlOpt = typer.Option(
    None, "--html", metavar="FILE",
    help="Also write a self-contained HTML page with charts to FILE (needs the html extra, matplotlib).",
)
# A test hook, hidden from --help: the only way to inject a fault (GPUDOCTOR_FAULT from the
# environment is ignored, launch/rank.adopt_fault); said first in the report when it acts.
FaultOpt = typer.Option(None, "--fault", metavar="RANK:KIND,...", hidden=True, help="Inject a fault on purpose (tests).")


# Bad input: reported as one line on stderr, exit 2 (cli/app.py). The commands raise
# the same class (core/usage.py) from their option checks.
UsageError = usage.UsageError


def usage_error(message: str) -> NoReturn:
    raise UsageError(message)


def exit_if_quiet(report: Report, strict: bool) -> None:
    """A QuietReport (core/quiet.py: a joined rank other than 0, whose job rank 0
    reports) is not printed: only its one line, if it has one, then its exit code."""
    import sys

    from gpudoctor.core.quiet import QuietReport

    if isinstance(report, QuietReport):
        if report.said:
            print(report.said, file=sys.stderr)
        raise typer.Exit(report_exit(report, strict) if report.code is None else report.code)


@contextlib.contextmanager
def html_written(path: str | None, title: str, report: Report, strict: bool):
    """`--html FILE`: the page is written first (the output that follows ends in an
    Exit); when it could not be, a line on stderr and the exit is at least 1."""
    from gpudoctor.render.html_page import Part, write_page

    problem = write_page(path, [Part(title, report)], title, strict=strict) if path else ""
    if path and not problem:
        from gpudoctor.render.escape import terminal

        err.print(terminal(f"gpudoctor: HTML report written to {path}", one_line=True), markup=False, highlight=False)
    try:
        yield
    except typer.Exit as done:
        if not problem:
            raise
        err.print(problem, markup=False, highlight=False)
        raise typer.Exit(max(done.exit_code, ExitCode.PROBLEM)) from None


def check_formats(json_out: bool, markdown: bool) -> None:
    """Called first by each command, so a bad pair fails before any work is done."""
    if json_out and markdown:
        usage_error("choose one of --json and --markdown")


def waiting_notice(command: str, say: Callable[[str], None] | None = None):
    """A joined rank 0 waiting for its peers says so: every 10 s on a terminal,
    every 30 s in a log, the first time after 5 s."""
    every = 10.0 if err.is_terminal else 30.0
    said = [5.0 - every]

    def on_wait(wait) -> None:
        if wait.waited_s - said[0] >= every:
            said[0] = wait.waited_s
            line = (
                f"{command}: waiting at {wait.address} for {wait.world_size - wait.arrived} of "
                f"{wait.world_size} ranks, {wait.waited_s:.0f} s"
            )
            if say is not None:
                say(line)
            else:
                err.print(line, markup=False, highlight=False)

    return on_wait


PROGRESS_EVERY_S = 30.0


class Heartbeat:
    """Off a terminal (srun, torchrun, CI logs), a long run is never silent for minutes:
    one plain line on stderr every PROGRESS_EVERY_S while the command works, with the
    time so far and what it is at. On a terminal the live display says it instead; a
    joined rank other than 0 says nothing (rank 0 speaks for the job)."""

    def __init__(self, command: str):
        self.command = command
        self.status: Callable[[], str] = lambda: ""
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "Heartbeat":
        import os

        from gpudoctor.launch.rundir import PROGRESS_EVERY_ENV

        if err.is_terminal or os.environ.get("RANK", "0") != "0":
            return self
        try:
            every = max(float(os.environ.get(PROGRESS_EVERY_ENV, PROGRESS_EVERY_S)), 0.1)
        except ValueError:
            every = PROGRESS_EVERY_S
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, args=(every, self._stop), daemon=True)
        self._thread.start()
        return self

    def _beat(self, every: float, stop: threading.Event) -> None:
        import sys
        import time

        start = time.monotonic()
        while not stop.wait(every):
            try:
                at = self.status()
            except Exception:  # a status read mid-update: the time alone still says it is alive
                at = ""
            line = f"gpudoctor {self.command}: still running, {time.monotonic() - start:.0f} s" + (f" ({at})" if at else "")
            print(line, file=sys.stderr, flush=True)

    @property
    def active(self) -> bool:
        return self._thread is not None

    def __exit__(self, *exc) -> None:
        if self._stop is not None and self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=2)


def emit(
    report: Report,
    *,
    json_out: bool = False,
    markdown: bool = False,
    strict: bool = False,
    rich_extra: Callable[[], Iterable[RenderableType]] | None = None,
    markdown_sections: Callable[[], Iterable[str]] | None = None,
    verbose: bool = False,
) -> NoReturn:
    """Print the report in the chosen form and leave with its exit code."""
    check_formats(json_out, markdown)
    try:
        if json_out:
            from gpudoctor.render.json_out import report_json

            print(report_json(report, strict))
        elif markdown:
            from gpudoctor.render.markdown import report_markdown

            print(report_markdown(report, markdown_sections() if markdown_sections else (), strict), end="")
        else:
            from gpudoctor.render.console import print_report

            print_report(out, report, rich_extra() if rich_extra else (), strict, verbose)
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # `| head -1`: the reader has what it wanted (cli/app.py)
    except OSError as exc:  # `> /dev/full`, a full disk: the report is lost, and said where it can be seen
        import os

        print(f"gpudoctor: could not write the report to standard output: {exc.strerror or exc}", file=sys.stderr)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())  # the interpreter's own flush at exit must not fail again
        os.close(null)
        raise typer.Exit(max(report_exit(report, strict), ExitCode.PROBLEM)) from None
    raise typer.Exit(report_exit(report, strict))
