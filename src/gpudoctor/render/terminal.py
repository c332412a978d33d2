"""The one place a rich Console is made. Colour only on a terminal and never
under NO_COLOR (https://no-color.org); results on stdout, progress and
warnings on stderr."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # imported where a console is made: no_color_asked() needs no rich
    from rich.console import Console


def no_color_asked() -> bool:
    return os.environ.get("NO_COLOR", "") != ""


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
        # pasted back: text lines stay whole there (tables still fit rich's width).
        soft = not (hasattr(stream, "isatty") and stream.isatty())
        return Console(stderr=stderr, highlight=False, width=width, soft_wrap=soft)  # rich reads NO_COLOR and isatty itself
    return Console(
        file=file if file is not None else (sys.stderr if stderr else sys.stdout),
        force_terminal=tty,
        no_color=not tty or no_color_asked(),
        highlight=False,
        width=width,
    )
