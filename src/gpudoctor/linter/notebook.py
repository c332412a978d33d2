"""A Jupyter notebook (.ipynb) as Python source: its code cells, one after
the other, and where each starts, so a line of the joined text reads back as
`cell N, line M`. The JSON is only read (never executed); the caller caps
its size before it gets here. IPython's own syntax (`%magic`, `!shell`,
`?help`) is blanked out, line for line, so the numbering stays right."""

from __future__ import annotations

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
    dropped: int = 0  # cells past MAX_CELLS, not read


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
    return Notebook("\n".join(lines), notebook.starts, notebook.dropped)


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
    line = 1
    for cell in cells[:MAX_CELLS]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        lines = source.split("\n")
        if lines and CELL_MAGIC.match(lines[0]):
            lines = [""] * len(lines)
        lines = _python_only(lines)
        starts.append(line)
        parts.append("\n".join(lines))
        line += len(lines)
    return Notebook("\n".join(parts) + ("\n" if parts else ""), tuple(starts), max(0, len(cells) - MAX_CELLS))
