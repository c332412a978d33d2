"""The one way a fact says "unknown, because ...".

A probe that cannot read a value stores `Unavailable(reason)` in its place
instead of raising or storing a bare None: the reason travels with the value
into the JSON snapshot and the report, and printing it needs no branch
(`str(Unavailable("no driver"))` is "unavailable: no driver"). None keeps its
own meaning where it has one (an unset environment variable, a CPU build's
`torch.version.cuda`). Checks test for it with `isinstance(v, Unavailable)`
or by asking for the type they need (`isinstance(v, int)`).
"""

from __future__ import annotations

from dataclasses import dataclass

# How an Unavailable value looks in a JSON snapshot: {"unavailable": "reason"}.
JSON_KEY = "unavailable"


@dataclass(frozen=True)
class Unavailable:
    reason: str

    def __str__(self) -> str:
        return f"unavailable: {self.reason}"

    def __bool__(self) -> bool:
        # An unknown value is never "true": `if facts.torch.is_available:` reads right.
        return False


def describe_error(exc: BaseException) -> str:
    """One line for an exception: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
