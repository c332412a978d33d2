"""One finding id's documentation: the fields of docs/findings/<id>.md."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FindingDoc:
    """Markdown in every field but `says` and `cases`. `severity`, `area` and
    `emitted_by` are shown as written (e.g. "warn (ok when large enough)");
    `checked` is an optional "How it is checked" section, for findings whose
    test is not obvious.

    `says` is the plain-text sentence the code puts in Finding.why
    (`catalog.why(id)`); an id reported for different reasons has `cases`
    instead, one sentence per case name (`catalog.why(id, case)`). Either may
    hold str.format fields ("{n}") the code fills in. The page shows them under
    "Why it matters", so the page and the output say the same.

    `does` is, the same way, the plain-text command or code line the code puts
    in Finding.fix (`catalog.fix(id)`), or `fix_cases` one per case name
    (`catalog.fix(id, case)`); the page shows them under "Fix"."""

    id: str
    severity: str
    area: str
    emitted_by: str  # the commands that report it, linked to docs/commands/
    summary: str  # what was seen, in a sentence or two
    evidence: str  # the keys of Finding.evidence and what they hold
    why: str
    fix: str  # commands or code lines a user can paste
    checked: str = ""
    says: str = ""
    cases: Mapping[str, str] = field(default_factory=dict)
    does: str = ""
    fix_cases: Mapping[str, str] = field(default_factory=dict)
