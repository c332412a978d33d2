"""Untrusted text made safe to show: the one place it is done.

Log lines, error files, Flight Recorder dumps, file names and facts snapshots are
written by someone else. Sent raw to a terminal, an escape sequence in them can write
the clipboard (OSC 52), retitle the window, hide a link behind harmless text (OSC 8)
or redraw what the user reads; rich's `Text` passes them through (it drops only
\\a \\b \\v \\f \\r). In Markdown (`--markdown`, a notebook's display) a backtick ends
a code span and `<` starts raw HTML. So:

- `terminal` shows every control character as its escape (`\\x1b`, `\\x9b`, `\\u202e`):
  C0 but tab and newline, DEL, C1, and the Unicode bidirectional overrides that
  reorder what is shown (the "Trojan Source" characters);
- `Shown` wraps a rich renderable and does the same to every piece of text it
  prints, after layout: whatever a view puts in it, nothing raw reaches the terminal;
- `md_text`, `md_code` and `md_block` put text into Markdown as text, an inline
  code span, or a fenced block, none of which the text can end or turn into HTML.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich only where something is drawn with it: a rank's plain report does not import it
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

_BIDI = (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF)
_CONTROLS = [c for c in (*range(0x00, 0x20), *range(0x7F, 0xA0), *_BIDI) if c not in (0x09, 0x0A)]
_SHOWN = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROLS}
_SHOWN[0x0D] = "\\r"
_TABLE = str.maketrans(_SHOWN)
_ANY = frozenset(chr(c) for c in _CONTROLS)


def terminal(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character shown as its escape; newlines too when `one_line`."""
    if _ANY.isdisjoint(text) and not (one_line and "\n" in text):
        return text  # the common case, and cheap
    shown = text.translate(_TABLE)
    return shown.replace("\n", "\\n") if one_line else shown


class Shown:
    """A rich renderable whose text is printed through `terminal` (rich's own colour
    codes are not in the text of its segments, so they are kept)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for seg in console.render(self.inner, options):
            if seg.control or _ANY.isdisjoint(seg.text):
                yield seg
            else:
                yield Segment(terminal(seg.text), seg.style)


# Markdown punctuation that could start a link, an HTML tag, an entity, a table cell or a code span.
_MD_TABLE = str.maketrans({c: "\\" + c for c in "\\`[]<>&|"})


class Markdown(str):
    """Text already made safe for Markdown (what md_text and md_code return): not escaped twice."""


def md_text(text: str) -> str:
    """Text for a Markdown paragraph, heading or table cell: shown as written, one line."""
    return Markdown(terminal(text, one_line=True).translate(_MD_TABLE))


def md_code(text: str) -> str:
    """An inline code span holding `text` (one line): fenced by more backticks than any run
    inside it, so that no backtick of the text can end it."""
    text = terminal(text, one_line=True)
    fence = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""
    return Markdown(f"{fence}{pad}{text}{pad}{fence}")


def md_block(text: str, indent: str = "") -> list[str]:
    """A fenced code block holding `text` (any number of lines), each line after `indent`."""
    text = terminal(text)
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return [indent + fence, *(indent + line for line in text.split("\n")), indent + fence]


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(re.escape(char) + "+", text)), default=0)


def html_text(text: str) -> str:
    """Text for an HTML element or a quoted attribute: shown as written (control
    characters as their escapes, as on a terminal), never markup."""
    import html

    return html.escape(terminal(text), quote=True)
