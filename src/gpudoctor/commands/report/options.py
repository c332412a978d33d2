"""What `gpudoctor report` is asked to do, and its one check (UsageError, the CLI's
text), made before any step runs: a bad --skip or an unwritable --output would
otherwise be found after minutes of steps."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.commands.report.steps import STEP_NAMES
from gpudoctor.core.usage import UsageError

SKIPPABLE = STEP_NAMES[1:]
MIN_TIMEOUT_S = 1.0  # the CLI's --timeout refuses less


@dataclass(frozen=True, kw_only=True)
class Options:
    """Its defaults are the CLI's flags' (cli/report.py)."""

    output: str = "gpudoctor-report.md"
    nproc: int = 2  # ranks of the allreduce and train-smoke steps
    timeout: float = 120.0  # watchdog of each multi-rank step, seconds
    skip: tuple[str, ...] = ()  # steps left out ("a,b" already split)
    html: str | None = None  # also a self-contained HTML page of the steps (render/html_page.py)


def validate(options: Options) -> Options:
    from gpudoctor.core.user_file import FileRefused, check_writable

    unknown = set(options.skip) - set(SKIPPABLE)
    if unknown:
        raise UsageError(f"--skip {', '.join(sorted(unknown))}: choose from {', '.join(SKIPPABLE)}")
    try:
        check_writable(options.output)
    except FileRefused as exc:
        raise UsageError(f"--output {exc}") from None
    if options.html:
        from gpudoctor.render.html_page import html_problem

        if problem := html_problem(options.html):
            raise UsageError(problem)
    return options
