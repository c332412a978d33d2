"""What `gpudoctor run` is asked to do, and the one check of it (UsageError, the CLI's
text), made before the script starts: a typo in the target, an impossible --nproc or
a --json FILE that cannot be written is said at once, not after an hour of training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.core.usage import UsageError

if TYPE_CHECKING:
    from gpudoctor.hooks.target import Target

MIN_TIMEOUT_S = 0.1


@dataclass(frozen=True, kw_only=True)
class Options:
    """Its defaults are the CLI's flags' (cli/run.py)."""

    target: tuple[str, ...] = ()  # SCRIPT ARGS... or -m MODULE ARGS..., as python takes them
    nproc: int | None = None  # None: this process becomes the script (exec)
    json_file: str | None = None  # also write the findings there
    strict: bool = False
    timeout: float | None = None  # stop the script after this many seconds
    hang_timeout: float | None = None  # with --nproc: no collective progress for this long is a hang (0: never)
    trace: str | None = None  # a Chrome trace of the ranks' steps and collectives
    html: str | None = None  # with --nproc: a self-contained HTML page of the merged report


def validate(options: Options) -> Target:
    """The target to run, parsed and checked; UsageError for anything that cannot run."""
    from gpudoctor.core.user_file import FileRefused, check_writable
    from gpudoctor.hooks.target import TargetError, check_target, parse_target
    from gpudoctor.launch.capacity import nproc_problem

    if options.nproc is not None and (problem := nproc_problem(options.nproc)):
        raise UsageError(problem)
    # `not x >= m` and not `x < m`: a NaN is refused too.
    if options.timeout is not None and not options.timeout >= MIN_TIMEOUT_S:
        raise UsageError(f"--timeout {options.timeout:g}: must be at least {MIN_TIMEOUT_S:g} seconds")
    if options.hang_timeout is not None and not options.hang_timeout >= 0:
        raise UsageError(f"--hang-timeout {options.hang_timeout:g}: must be 0 (never) or more seconds")
    try:
        target = parse_target(list(options.target))
        check_target(target)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    if options.html:
        from gpudoctor.render.html_page import html_problem

        if options.nproc is None:
            raise UsageError("--html FILE needs --nproc N (the page draws the ranks' merged report; one process writes --json FILE)")
        if problem := html_problem(options.html):
            raise UsageError(problem)
    # Checked before the script runs: a report that cannot be written after an hour of
    # training is a CI failure nobody sees.
    for flag, path in (("--json", options.json_file), ("--trace", options.trace)):
        if path:
            try:
                check_writable(path)
            except FileRefused as exc:
                raise UsageError(f"{flag} {exc}") from None
    return target
