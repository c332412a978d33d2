"""gpudoctor run: run a training script under the doctor (runtime hooks), as
`python SCRIPT ARGS` would, and say what went wrong where.

One process: the command checks the target and execs
`python -m gpudoctor.hooks.main SCRIPT ARGS` in its own place (same pid, so
torchrun's and the shell's signals reach the script directly). `--nproc N`:
N ranks through the supervised launcher, then one merged report.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import List, NoReturn, Optional

import typer

from gpudoctor.cli.output import import_error_behind, torch_import_finding, usage_error

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
            None, "--nproc", metavar="N", help="Start N ranks, 1 to 256 (gloo/NCCL env:// rendezvous on 127.0.0.1); their stdin is empty (/dev/null)."
        ),
        json_file: Optional[str] = typer.Option(
            None, "--json", metavar="FILE", help="Also write the findings as JSON to FILE (stdout stays the script's)."
        ),
        strict: bool = typer.Option(
            False, "--strict", help="Exit 1 when the script exits 0 but a warning or an error was found."
        ),
        timeout: Optional[float] = typer.Option(
            None,
            "--timeout",
            metavar="S",
            min=0.1,
            help="Stop the script after S seconds, printing every thread's stack.",
        ),
        hang_timeout: Optional[float] = typer.Option(
            None,
            "--hang-timeout",
            metavar="S",
            min=0,
            help="With --nproc: when no rank makes collective progress for S seconds while one waits in a "
            "collective, show where every rank stands and stop the job (default 600; 0: never).",
        ),
        trace: Optional[str] = typer.Option(
            None,
            "--trace",
            metavar="FILE",
            help="Write each rank's step phases and collectives to FILE as a Chrome trace (open it in "
            "ui.perfetto.dev or chrome://tracing); under torchrun every rank writes FILE.rank<N>.json.",
        ),
    ) -> None:
        """Run a script under the doctor: device-mismatch errors explained, DDP pitfalls caught at run time.

        Findings go to stderr at exit, prefixed by rank; the exit code is the script's.
        """
        from gpudoctor.launch.capacity import nproc_problem
        from gpudoctor.hooks.target import TargetError, check_target, parse_target

        if nproc is not None and (problem := nproc_problem(nproc)):
            usage_error(problem)

        try:
            parsed = parse_target(list(target or []))
            check_target(parsed)
        except TargetError as exc:
            usage_error(str(exc))
        if json_file:
            # Checked before the script runs: a report that cannot be written after
            # an hour of training is a CI failure nobody sees.
            from gpudoctor.core.user_file import FileRefused, check_writable

            try:
                check_writable(json_file)
            except FileRefused as exc:
                usage_error(f"--json {exc}")
        if trace:
            from gpudoctor.core.user_file import FileRefused, check_writable

            try:
                check_writable(trace)
            except FileRefused as exc:
                usage_error(f"--trace {exc}")
        from gpudoctor.hooks import session as names
        from gpudoctor.hooks.step_clock import TRACE_ENV

        env = {names.ENV_ON: "1", names.ENV_TARGET: parsed.describe()}
        if json_file:
            env[names.ENV_JSON] = os.path.abspath(json_file)
        if strict:
            env[names.ENV_STRICT] = "1"
        if trace:
            env[TRACE_ENV] = os.path.abspath(trace)
        if nproc is None:
            if timeout:
                env[names.ENV_TIMEOUT] = str(timeout)
            if hang_timeout is not None:  # for the ranks of torchrun / srun
                env["GPUDOCTOR_RUN_HANG_TIMEOUT"] = str(hang_timeout)
            _exec_runtime(parsed.argv(), env)
        raise typer.Exit(_run_ranks(parsed, nproc, env, timeout, json_file, strict, hang_timeout))


def _exec_runtime(argv: list[str], env: dict[str, str]) -> NoReturn:
    os.environ.update(env)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(sys.executable, [sys.executable, "-m", "gpudoctor.hooks.main", *argv])
    except OSError as exc:  # an interpreter that cannot be executed (mode, noexec mount, gone)
        usage_error(f"cannot start the script with {sys.executable or 'python'}: {exc.strerror or exc}")


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
            self.live.update(Text(status_line(steps)))

    def __enter__(self) -> "StepsLine":
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.stop()


def _stdin_has_input() -> bool:
    """Whether our stdin is a pipe, a socket or a non-empty file: input that the
    ranks will not see. A terminal or /dev/null is no surprise (docs/commands/run.md)."""
    import stat

    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size > 0)


def _run_ranks(parsed, nproc: int, env: dict[str, str], timeout, json_file, strict: bool, hang_timeout=None) -> int:
    """--nproc: each rank prints its own findings (echoed with its prefix); here
    come how the ranks ended, one summary line, and the merged JSON."""
    from gpudoctor.core.exit_code import ExitCode, script_exit
    from gpudoctor.hooks.step_clock import TRACE_ENV
    from gpudoctor.launch.capacity import crowded, usable_cores
    from gpudoctor.probe.cuda import probe_cuda
    from gpudoctor.render.run_text import findings_text, ranks_line, ranks_summary
    from gpudoctor.commands.run.nproc import run_ranks
    from gpudoctor.hooks.report import write_json

    too_many = crowded("run", nproc, usable_cores())
    if too_many:
        sys.stderr.write(findings_text([too_many], f"gpudoctor run: starting {nproc} ranks"))
    # A torch that cannot be imported is said before any rank starts; a CPU-only build
    # is known from its files, and this process need not import it (its ranks do).
    cuda = probe_cuda(quick=True)
    if cuda.import_error:
        broken = torch_import_finding(cuda.import_error)
        sys.stderr.write(findings_text([broken], f"gpudoctor run: no rank started for {parsed.describe()}"))
        return ExitCode.PROBLEM
    if _stdin_has_input():
        sys.stderr.write(
            "gpudoctor run: the ranks' stdin is empty (/dev/null), not this pipe or file: "
            "pass input to a --nproc run as a file or an argument\n"
        )
    from gpudoctor.hang.watch import DEFAULT_HANG_TIMEOUT_S

    hang = DEFAULT_HANG_TIMEOUT_S if hang_timeout is None else hang_timeout
    with StepsLine() as line:
        done = run_ranks(parsed, nproc, env, timeout, hang, on_steps=line.update if line.live else None)
    if done.output_closed:
        return done.status  # `| head -1`: the reader has what it wanted
    report = done.report
    printed: list = []  # findings already on stderr
    if import_error := import_error_behind(cuda, done.status != 0):
        # The ranks failed, and the torch this process skipped importing is why.
        broken = torch_import_finding(import_error)
        sys.stderr.write(findings_text([broken], "gpudoctor run: this torch cannot be imported"))
        report = replace(report, findings=(broken, *report.findings))
        printed.append(broken)
    from gpudoctor.render.step_table import steps_table

    # The one merged report: how the ranks ended, their step times, and what the ranks'
    # hooks saw, each finding once (the ranks themselves print none of it).
    ended = [f for f in report.findings if f not in printed]
    summary = ranks_summary(report.counts(), nproc, parsed.describe())
    text = steps_table(report.data.get("steps"))
    text += findings_text(ended, summary) if ended else summary + "\n"
    if done.kept:
        text += ranks_line(report.data.get("root_cause"), report.data.get("ranks") or [])
        text += f"run folder: {done.run_dir} (each rank's log, stacks and collective trace; gpudoctor diagnose DIR)\n"
    sys.stderr.write(text)
    if json_file:
        problem = write_json(os.path.abspath(json_file), report, strict)
        if problem:
            sys.stderr.write(problem + "\n")
            return done.status or ExitCode.PROBLEM  # the report asked for is not there: not a success
    if done.timelines is not None:
        from gpudoctor.hooks.step_clock import write_trace

        problem = write_trace(env[TRACE_ENV], done.timelines, {r["rank"]: r["node"] for r in report.data["steps"]["ranks"]})
        sys.stderr.write((problem or f"gpudoctor run: trace written to {env[TRACE_ENV]} (open it in ui.perfetto.dev)") + "\n")
    return script_exit(done.status, report, strict)
