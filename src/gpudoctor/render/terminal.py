"""The one place a rich Console is made. Colour only on a terminal and never
under NO_COLOR (https://no-color.org); results on stdout, progress and
warnings on stderr.

Width: most output is read in a log (srun, torchrun, CI), not a terminal. Off a
terminal, rich's default of 80 columns cut every wide table (`to…`, `NC…`), so there
the width is LOG_WIDTH unless COLUMNS says otherwise: tables keep their natural width
and text lines are never wrapped. COLUMNS=0, junk or a tiny value never prints nothing
(rich took 0 at its word): it is ignored, or raised to MIN_WIDTH."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # imported where a console is made: no_color_asked() needs no rich
    from rich.console import Console


def no_color_asked() -> bool:
    return os.environ.get("NO_COLOR", "") != ""


MIN_WIDTH = 40
LOG_WIDTH = 1000  # wide enough for any table gpudoctor draws; nothing it prints pads to the width


def columns_asked() -> int | None:
    """COLUMNS as a usable width: None when unset, 0 or not a number; at least MIN_WIDTH."""
    raw = os.environ.get("COLUMNS", "").strip()
    if not raw.isdigit() or int(raw) == 0:
        return None
    return max(int(raw), MIN_WIDTH)


def _terminal_width(stream: IO[str]) -> int | None:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return None
    return max(columns, MIN_WIDTH) if columns else None


def stream_width(stream: IO[str], tty: bool) -> int | None:
    """The width to draw at on `stream`; None leaves it to rich (a terminal it can ask)."""
    asked = columns_asked()
    if asked is not None:
        return asked
    if not tty:
        return LOG_WIDTH
    if os.environ.get("COLUMNS") is not None:
        # COLUMNS set but unusable: rich would believe it, so ask the terminal here.
        return _terminal_width(stream) or 80
    return None


def make_console(*, stderr: bool = False, file: IO[str] | None = None, tty: bool | None = None, width: int | None = None) -> Console:
    """A console for stdout (default), stderr, or a buffer standing in for one.

    `tty` says whether what the text ends up on is a terminal, for a buffer
    that rich cannot ask; left out, rich asks the stream itself."""
    from rich.console import Console

    if file is not None and tty is None:
        tty = False
    if tty is None:
        stream = sys.stderr if stderr else sys.stdout
        # Piped into a file, a CI log or a pager, a wrapped fix command could not be
        # pasted back: text lines stay whole there (and tables get LOG_WIDTH: stream_width).
        soft = not (hasattr(stream, "isatty") and stream.isatty())
        if width is None:
            width = stream_width(stream, not soft)
        return Console(stderr=stderr, highlight=False, width=width, soft_wrap=soft)  # rich reads NO_COLOR and isatty itself
    return Console(
        file=file if file is not None else (sys.stderr if stderr else sys.stdout),
        force_terminal=tty,
        no_color=not tty or no_color_asked(),
        highlight=False,
        width=width,
    )
