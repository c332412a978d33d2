"""One finding id's documentation: the fields of docs/findings/<id>.md."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FindingDoc:
    """Markdown in every field. `severity`, `area` and `emitted_by` are shown
    as written (e.g. "warn (ok when large enough)"); `checked` is an optional
    "How it is checked" section, for findings whose test is not obvious."""

    id: str
    severity: str
    area: str
    emitted_by: str  # the commands that report it, linked to docs/commands/
    summary: str  # what was seen, in a sentence or two
    evidence: str  # the keys of Finding.evidence and what they hold
    why: str
    fix: str  # commands or code lines a user can paste
    checked: str = ""
