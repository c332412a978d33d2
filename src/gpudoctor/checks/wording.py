"""How checks write values into titles and evidence: sizes, unknowns, lists.
Evidence holds plain JSON values only (an Unavailable becomes its text)."""

from __future__ import annotations

from typing import Any

from gpudoctor.core.unavailable import Unavailable


def size(n: int | Unavailable) -> str:
    if isinstance(n, Unavailable):
        return str(n)
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit in ("B", "KiB", "MiB") else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def shown(value: Any) -> Any:
    """A fact value made fit for evidence: Unavailable -> its text, tuples -> lists."""
    if isinstance(value, Unavailable):
        return str(value)
    if isinstance(value, tuple):
        return [shown(v) for v in value]
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    return value


def or_none(value: Any, none: str = "none") -> Any:
    """Like shown(), with a word for None (a CPU build's CUDA version, say)."""
    return none if value is None else shown(value)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def quoted(value: str | None) -> str:
    return "unset" if value is None else repr(value)
