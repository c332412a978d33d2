"""One finding as it is shown: its lines, each a list of (text, style) pieces,
without rich. `gpudoctor check` draws them with rich (render/console.py); a
rank of the user's job prints them as plain text (render/run_text.py), so that
the user's process never imports rich (tests/e2e/test_rank_imports.py)."""

from __future__ import annotations

import os
import unicodedata
from typing import Any

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.render.escape import terminal
from gpudoctor.render.terminal import no_color_asked

MARKS = {
    Severity.OK: ("✓", "green"),
    Severity.INFO: ("•", "cyan"),
    Severity.WARN: ("!", "yellow"),
    Severity.ERROR: ("✗", "red"),
}

Piece = tuple[str, str]  # (text, style): a style is rich's words, e.g. "bold red", "dim", ""


def format_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) if value else "[]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items()) or "{}"
    if value is None:
        return "unset"
    return str(value)


def finding_pieces(f: Finding, verbose: bool = False) -> list[list[Piece]]:
    """The mark, title and id; evidence, why and fix under a problem."""
    mark, style = MARKS[f.severity]
    lines: list[list[Piece]] = [[("  " + mark + " ", f"bold {style}"), (f.title, ""), (f"  [{f.id}]", "dim")]]
    problem = f.severity in (Severity.WARN, Severity.ERROR)
    if f.evidence and (problem or verbose or f.severity is Severity.INFO):
        for key, value in f.evidence.items():
            text = format_value(value)
            first, *rest = text.splitlines() or [""]
            lines.append([(f"      {key}: {first}", "dim")])
            lines.extend([(f"        {line}", "dim")] for line in rest)
    if problem and f.why:
        lines.append([(f"      why: {f.why}", "")])
    if problem and f.fix:
        lines.append([("      fix: ", "bold"), (f.fix, "bold " + style)])
    return lines


# What rich does to text and styles, done the same way here (render/console.py is
# rich's side; tests/test_render_finding_text.py compares the two byte for byte).
_RICH_STRIPS = str.maketrans({c: None for c in (0x07, 0x08, 0x0B, 0x0C, 0x0D)})  # rich.control.strip_control_codes
_ATTRS = {"bold": "1", "dim": "2"}
_COLOURS = {"red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def colour_codes(tty: bool) -> tuple[bool, bool]:
    """(styles at all, colours too) for text bound for a terminal or not, as rich
    decides it: none off a terminal or on TERM=dumb/unknown; no colours (bold and
    dim kept) under NO_COLOR (https://no-color.org)."""
    if not tty or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return False, False
    return True, not no_color_asked()


def styled(text: str, style: str, codes: tuple[bool, bool]) -> str:
    """`text` in `style`'s SGR codes, one styled run per line, as rich writes them."""
    styles, colours = codes
    words = style.split()
    sgr = ";".join([_ATTRS[w] for w in ("bold", "dim") if w in words] + [_COLOURS[w] for w in words if colours and w in _COLOURS])
    if not styles or not sgr:
        return text
    return "\n".join(f"\x1b[{sgr}m{part}\x1b[0m" if part else part for part in text.split("\n"))


def plain_line(pieces: list[Piece], codes: tuple[bool, bool]) -> str:
    """One line of pieces as text: rich's stripped control codes gone, tabs expanded
    to 8 columns, every other control character shown as its escape, each piece styled."""
    out, column = [], 0
    for text, style in pieces:
        for chunk in _tab_chunks(text.translate(_RICH_STRIPS)):
            expanded, column = _expand_tabs(chunk, column)
            out.append(styled(terminal(expanded), style, codes))
    return "".join(out)


def _tab_chunks(text: str) -> list[str]:
    """Split after each tab: rich draws each such chunk as a styled run of its own."""
    parts = text.split("\t")
    return [part + "\t" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _width(ch: str) -> int:
    """Columns a character takes, as rich counts them (rich.cells): none for control,
    format and combining characters, two for East Asian wide ones."""
    code = ord(ch)
    if code < 0x20 or 0x7F <= code < 0xA0 or unicodedata.category(ch) in ("Mn", "Me", "Cf", "Zl", "Zp"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _expand_tabs(text: str, column: int) -> tuple[str, int]:
    out = []
    for ch in text:
        if ch == "\t":
            spaces = 8 - column % 8
            out.append(" " * spaces)
            column += spaces
        else:
            out.append(ch)
            column = 0 if ch == "\n" else column + _width(ch)
    return "".join(out), column
