"""What `gpudoctor diagnose` is asked to do, and the one check of it that both doors
(the CLI, gpudoctor.diagnose()) run. Bad input is a UsageError with the CLI's text."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.core.usage import UsageError


@dataclass(frozen=True, kw_only=True)
class Options:
    """Its defaults are the CLI's flags' and the Python API's (cli/diagnose.py, api.diagnose)."""

    path: str | None = None  # a log file, a run folder, or "-" for standard input
    text: bytes | None = None  # the log itself (the API's text=)
    explain: str | None = None  # a pattern id: its page instead of a diagnosis


def validate(options: Options) -> Options:
    """Raise UsageError for what cannot be diagnosed before anything is read."""
    if options.explain is not None:
        from gpudoctor.knowledge.patterns import BY_ID

        if options.explain not in BY_ID:
            import difflib

            # A bare `--explain` is itself a usage error: name the ids, never suggest it.
            close = difflib.get_close_matches(options.explain, BY_ID, n=3)
            raise UsageError(
                f"unknown pattern id {options.explain!r}"
                + (f"; did you mean {' or '.join(close)}?" if close else "")
                + f" (the ids, one page each in docs/patterns/: {', '.join(sorted(BY_ID))})"
            )
        return options
    if options.path is None and options.text is None:
        raise UsageError("give a log FILE, a run folder DIR, or - for stdin (or --explain ID)")
    if options.path is not None and options.text is not None:
        raise UsageError("give the log as text or as a path, not both")
    return options
