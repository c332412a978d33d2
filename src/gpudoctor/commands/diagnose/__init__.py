"""gpudoctor diagnose: read a log (a file, a paste on stdin, or a job's run folder)
and say what failed first, what it caused, and what to do about it.

    run(options)      the command, for the CLI and gpudoctor.diagnose() alike
    options.py        Options and their one check (UsageError, the CLI's text)
    inputs.py         what the path names: a file, stdin, a folder
    analyse.py        the log -> findings, cause first
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.commands.diagnose.options import Options
    from gpudoctor.core.findings import Report


def run(options: Options, *, progress: Callable[[str], None] | None = None) -> Report:
    """The diagnosis: a Report, or a UsageError (an InputError) for a log that cannot
    be read. `progress(line)` is told when standard input is a terminal waiting
    for a paste (otherwise the command just waits, and looks hung)."""
    import io

    from gpudoctor.commands.diagnose.analyse import diagnose
    from gpudoctor.commands.diagnose.inputs import Target, resolve
    from gpudoctor.commands.diagnose.options import validate

    options = validate(options)
    if options.explain is not None:
        raise ValueError("an --explain ID asks for explain(), not a diagnosis")
    if options.text is not None:
        return diagnose(Target("text", "<text>"), io.BytesIO(options.text))
    assert options.path is not None  # validate() said one of them is given
    target = resolve(options.path)
    if target.kind == "stdin" and progress is not None and _stdin_is_terminal():
        import sys

        end = "Ctrl-Z then Enter" if sys.platform == "win32" else "Ctrl-D"
        progress(f"gpudoctor diagnose: paste the log, then press {end} on a new line")
    return diagnose(target)


def explain(options: Options) -> str:
    """The page of the pattern `options.explain` (`--explain ID`)."""
    from gpudoctor.commands.diagnose.pattern_page import pattern_page
    from gpudoctor.commands.diagnose.options import validate
    from gpudoctor.knowledge.patterns import BY_ID

    options = validate(options)
    assert options.explain is not None
    return pattern_page(BY_ID[options.explain])


def _stdin_is_terminal() -> bool:
    import sys

    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # no stdin at all, or closed
        return False
