"""A Jupyter notebook (.ipynb) as Python source: its code cells, one after
the other, and where each starts, so a line of the joined text reads back as
`cell N, line M`. The JSON is only read (never executed); the caller caps
its size before it gets here. IPython's own syntax (`%magic`, `!shell`,
`?help`) is blanked out, line for line, so the numbering stays right."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

# A line IPython handles itself: `%matplotlib inline`, `!pip install x`,
# `%%time` (a cell magic: the rest of that cell is not Python either).
IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|\?|\w[\w.]*\?\s*$|[\w.,\s]+=\s*[%!])")
CELL_MAGIC = re.compile(r"^\s*%%")
# Bounds on what one notebook may hold (a notebook is data: be strict).
MAX_CELLS = 10_000


class NotNotebook(ValueError):
    """The file is not a notebook this module can read; the message is one line."""


@dataclass(frozen=True)
class Notebook:
    text: str
    starts: tuple[int, ...]  # 1-based line of the joined text where each code cell starts
    # Where each line of the joined text is in the .ipynb file itself: the JSON string
    # index of its first character and, where escapes make them differ, of every
    # character. () when the file's layout could not be followed (then cells' lines serve).
    places: tuple["LinePlace", ...] = ()
    line_starts: tuple[int, ...] = ()  # index in the .ipynb text where each of its lines starts
    dropped: int = 0  # cells past MAX_CELLS, not read


@dataclass(frozen=True)
class LinePlace:
    first: int  # index in the .ipynb text of the line's first character (or where it would be)
    chars: tuple[int, ...] | None = None  # every character's index, when escapes shift them


def file_position(notebook: Notebook, line: int, col: int) -> tuple[int, int] | None:
    """(line, column) in the .ipynb file of `line`:`col` of the joined text, both 1-based."""
    if not notebook.places or not 0 < line <= len(notebook.places):
        return None
    place = notebook.places[line - 1]
    if place.chars is not None and 0 < col <= len(place.chars):
        index = place.chars[col - 1]
    else:
        index = place.first + col - 1
    row = bisect.bisect_right(notebook.line_starts, index)
    return row, index - notebook.line_starts[row - 1] + 1


def _string_at(text: str, quote: int) -> tuple[list[tuple[str, int]], int]:
    """The JSON string whose opening quote is at `quote`: each decoded character with
    its index in `text`, and the index after the closing quote."""
    out: list[tuple[str, int]] = []
    i = quote + 1
    while i < len(text) and text[i] != '"':
        if text[i] == "\\":
            end = i + 6 if text[i + 1 : i + 2] == "u" else i + 2
            out.extend((ch, i) for ch in json.loads(f'"{text[i:end]}"'))
            i = end
        else:
            out.append((text[i], i))
            i += 1
    return out, i + 1


_SOURCE_KEY = re.compile(r'"(?:source|input)"\s*:\s*')


def _cell_chars(text: str, at: int) -> tuple[list[tuple[str, int]], int]:
    """A cell's source (a string, or a list of strings) from `at`: its characters with their indices."""
    if text[at] == '"':
        return _string_at(text, at)
    chars: list[tuple[str, int]] = []
    i = at + 1  # after "["
    while i < len(text):
        while text[i] in " \t\r\n,":
            i += 1
        if text[i] == "]":
            return chars, i + 1
        part, i = _string_at(text, i)
        chars += part
    raise ValueError("unfinished source list")


def _places(text: str, sources: list[str]) -> tuple[tuple[LinePlace, ...], tuple[int, ...]]:
    """Every code cell's lines found in the raw JSON, in order; () when they cannot all be."""
    places: list[LinePlace] = []
    pos = 0
    try:
        for source in sources:
            m = _SOURCE_KEY.search(text, pos)
            while m is not None:  # the next "source" key whose value is this code cell's source
                chars, end = _cell_chars(text, m.end())
                if "".join(c for c, _ in chars) == source:
                    break
                m = _SOURCE_KEY.search(text, end)
            if m is None:
                return (), ()
            pos = end
            line: list[tuple[str, int]] = []
            for ch, index in chars + [("\n", end)]:
                if ch == "\n":
                    first = line[0][1] if line else index
                    shifted = any(b - a != 1 for (_, a), (_, b) in zip(line, line[1:]))
                    places.append(LinePlace(first, tuple(i for _, i in line) if shifted else None))
                    line = []
                else:
                    line.append((ch, index))
    except (ValueError, IndexError, RecursionError):
        return (), ()
    starts = (0, *(i + 1 for i, ch in enumerate(text) if ch == "\n"))
    return tuple(places), starts


def _python_only(lines: list[str]) -> list[str]:
    """IPython's lines blanked, with the lines they continue onto (`!cmd \\`)."""
    out = []
    continued = False
    for line in lines:
        if continued:
            out.append("")
        elif IPYTHON_LINE.match(line):
            # `pass` keeps a block whose body was IPython (`if colab:\n    !pip install x`) valid
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            out.append(line)
        continued = (continued or IPYTHON_LINE.match(line) is not None) and line.rstrip().endswith("\\")
    return out


def without_cell(notebook: Notebook, line: int) -> Notebook:
    """The notebook with the code cell holding `line` blanked (a cell that is
    not Python: IPython syntax this module does not know, or a scratch cell)."""
    cell, at = cell_line(notebook.starts, line)
    lines = notebook.text.split("\n")
    first = cell - 1 if at == 1 and cell > 1 else cell  # the error shows on the line after an unfinished cell
    start = notebook.starts[first - 1] - 1
    end = notebook.starts[cell] - 1 if cell < len(notebook.starts) else len(lines) - 1
    lines[start:end] = [""] * (end - start)
    return Notebook("\n".join(lines), notebook.starts, notebook.places, notebook.line_starts, notebook.dropped)


def cell_line(starts: tuple[int, ...], line: int) -> tuple[int, int]:
    """A line of the joined text -> (code cell number from 1, line within it)."""
    cell = 0
    for i, start in enumerate(starts):
        if start > line:
            break
        cell = i
    return cell + 1, line - starts[cell] + 1


def read_notebook(text: str) -> Notebook:
    """The notebook's code cells joined (raises NotNotebook for anything else)."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotNotebook(f"not a notebook: invalid JSON ({str(exc).splitlines()[0][:80]})") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if cells is None and isinstance(doc, dict) and isinstance(doc.get("worksheets"), list):
        cells = [c for w in doc["worksheets"] if isinstance(w, dict) for c in w.get("cells") or []]  # nbformat 3
    if not isinstance(cells, list):
        raise NotNotebook("not a notebook: no list of cells")
    parts: list[str] = []
    starts: list[int] = []
    sources: list[str] = []
    line = 1
    for cell in cells[:MAX_CELLS]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        sources.append(source)
        lines = source.split("\n")
        if lines and CELL_MAGIC.match(lines[0]):
            lines = [""] * len(lines)
        lines = _python_only(lines)
        starts.append(line)
        parts.append("\n".join(lines))
        line += len(lines)
    places, line_starts = _places(text, sources)
    return Notebook("\n".join(parts) + ("\n" if parts else ""), tuple(starts), places, line_starts, max(0, len(cells) - MAX_CELLS))
