"""`gpudoctor run`: a training script under the doctor (runtime hooks), run as
`python SCRIPT ARGS` would, and what went wrong where.

    run(options)  the command: for one process an Exec for the CLI to carry out (the
                  script takes this process's place: same pid, so torchrun's and the
                  shell's signals reach it directly); with --nproc N the ranks, then
                  one merged report
    options.py    Options and their one check (UsageError, the CLI's text)
    nproc.py      --nproc: the ranks through the supervised launcher, their report
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.commands.run.options import Options
    from gpudoctor.core.findings import Report

RUNTIME = ("-m", "gpudoctor.hooks.main")  # python's arguments that run a script under the hooks


@dataclass(frozen=True)
class Exec:
    """One process: exec `argv` with `env` added, in this process's place."""

    argv: tuple[str, ...]
    env: dict[str, str]


@dataclass(frozen=True)
class Ended:
    """--nproc: the ranks' merged report and the exit status the run amounts to."""

    report: Report
    status: int


def run(
    options: Options,
    *,
    progress: Callable[[str], None] | None = None,
    on_steps: Callable[[dict], None] | None = None,
) -> Exec | Ended:
    """`progress(text)`: what to tell the user on stderr (whole lines, each ending in a
    newline); `on_steps(steps)`: about every second, the ranks' step accounting (a live line)."""
    from gpudoctor.commands.run.options import validate
    from gpudoctor.hooks import session as names
    from gpudoctor.hooks.step_clock import TRACE_ENV

    target = validate(options)
    from gpudoctor.launch.rundir import drop_inherited

    dropped = drop_inherited(os.environ)  # only what this run sets acts in its processes
    if dropped and progress is not None:
        progress(f"gpudoctor run: ignored {', '.join(dropped)} from the environment (gpudoctor sets them for its own processes only)\n")
    env = {names.ENV_ON: "1", names.ENV_TARGET: target.describe()}
    if options.json_file:
        env[names.ENV_JSON] = os.path.abspath(options.json_file)
    if options.strict:
        env[names.ENV_STRICT] = "1"
    if options.trace:
        env[TRACE_ENV] = os.path.abspath(options.trace)
    if options.nproc is None:
        if options.timeout:
            env[names.ENV_TIMEOUT] = str(options.timeout)
        if options.hang_timeout is not None:  # for the ranks of torchrun / srun
            from gpudoctor.launch import rundir

            env[rundir.RUN_HANG_TIMEOUT_ENV] = str(options.hang_timeout)
        return Exec((sys.executable, *RUNTIME, *target.argv()), env)
    return _ranks(options, target, env, progress or (lambda text: None), on_steps)


def _ranks(options: Options, target, env: dict[str, str], say: Callable[[str], None], on_steps) -> Ended:
    """--nproc: the ranks print no findings of their own; here comes the one merged
    report (how the ranks ended, every finding once with its ranks), one summary
    line, each rank's state and the root cause, and the merged JSON."""
    from gpudoctor.launch.torch_missing import import_error_behind, torch_import_finding
    from gpudoctor.commands.run.nproc import run_ranks
    from gpudoctor.core.exit_code import ExitCode, script_exit
    from gpudoctor.hang.watch import DEFAULT_HANG_TIMEOUT_S
    from gpudoctor.hooks.report import write_json
    from gpudoctor.hooks.step_clock import TRACE_ENV
    from gpudoctor.launch.capacity import crowded, usable_cores
    from gpudoctor.launch.threads import threads_line
    from gpudoctor.probe.cuda import probe_cuda
    from gpudoctor.render.run_text import findings_text, ranks_line, ranks_summary
    from gpudoctor.render.step_table import steps_table

    nproc = options.nproc
    assert nproc is not None
    too_many = crowded("run", nproc, usable_cores())
    if too_many:
        say(findings_text([too_many], f"gpudoctor run: starting {nproc} ranks"))
    # A torch that cannot be imported is said before any rank starts; a CPU-only build
    # is known from its files, and this process need not import it (its ranks do).
    cuda = probe_cuda(quick=True)
    if cuda.import_error:
        broken = torch_import_finding(cuda.import_error)
        say(findings_text([broken], f"gpudoctor run: no rank started for {target.describe()}"))
        from gpudoctor.core.findings import Report

        return Ended(Report("run", (broken,)), ExitCode.PROBLEM)
    if _stdin_has_input():
        say(
            "gpudoctor run: the ranks' stdin is empty (/dev/null), not this pipe or file: "
            "pass input to a --nproc run as a file or an argument\n"
        )
    hang = DEFAULT_HANG_TIMEOUT_S if options.hang_timeout is None else options.hang_timeout
    done = run_ranks(target, nproc, env, options.timeout, hang, on_steps=on_steps)
    if done.output_closed:
        return Ended(done.report, done.status)  # `| head -1`: the reader has what it wanted
    report = done.report
    printed: list = []  # findings already said
    if import_error := import_error_behind(cuda, done.status != 0 and not done.interrupted, done.report.data):
        # The ranks failed, and the torch this process skipped importing is why.
        broken = torch_import_finding(import_error)
        say(findings_text([broken], "gpudoctor run: this torch cannot be imported"))
        report = replace(report, findings=(broken, *report.findings))
        printed.append(broken)
    # The one merged report: how the ranks ended, their step times, and what the ranks'
    # hooks saw, each finding once (the ranks themselves print none of it).
    ended = [f for f in report.findings if f not in printed]
    summary = ranks_summary(report.counts(), nproc, target.describe())
    text = steps_table(report.data.get("steps"))
    if threads := threads_line(report.data.get("threads")):
        text += threads + "\n"
    text += findings_text(ended, summary) if ended else summary + "\n"
    if done.kept:
        text += ranks_line(report.data.get("root_cause"), report.data.get("ranks") or [])
        text += f"run folder: {done.run_dir} (each rank's log, stacks and collective trace; gpudoctor diagnose DIR)\n"
    say(text)
    if options.json_file:
        problem = write_json(os.path.abspath(options.json_file), report, options.strict)
        if problem:
            say(problem + "\n")
            return Ended(report, done.status or ExitCode.PROBLEM)  # the report asked for is not there: not a success
    if options.html:
        from gpudoctor.render.html_page import Part, write_page

        title = f"gpudoctor run --nproc {nproc} {target.describe()}"
        problem = write_page(options.html, [Part(title, report)], title, strict=options.strict)
        say((problem or f"gpudoctor run: HTML report written to {options.html}") + "\n")
        if problem:
            return Ended(report, done.status or ExitCode.PROBLEM)  # the page asked for is not there: not a success
    if done.timelines is not None:
        from gpudoctor.hooks.step_clock import write_trace

        problem = write_trace(env[TRACE_ENV], done.timelines, {r["rank"]: r["node"] for r in report.data["steps"]["ranks"]})
        say((problem or f"gpudoctor run: trace written to {env[TRACE_ENV]} (open it in ui.perfetto.dev)") + "\n")
        if problem:
            return Ended(report, done.status or ExitCode.PROBLEM)  # the trace asked for is not there: not a success
    return Ended(report, script_exit(done.status, report, options.strict))


def _stdin_has_input() -> bool:
    """Whether our stdin is a pipe, a socket or a non-empty file: input that the
    ranks will not see. A terminal or /dev/null is no surprise (docs/commands/run.md)."""
    import stat

    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size > 0)
