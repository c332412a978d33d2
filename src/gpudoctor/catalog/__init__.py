"""What gpudoctor can say, as data: one entry per finding id (what it means,
why it matters, the fix, which command reports it, the sentence the code puts
in a finding's `why` and the command it puts in its `fix`). The pages under
docs/ are generated from here (`python -m gpudoctor.docs`); tests/test_docs.py
fails when code emits an id the catalog lacks, writes a `why` or a `fix`
itself, or the pages and the catalog differ."""

from __future__ import annotations

from collections.abc import Mapping


def why(id: str, case: str | None = None, **fields: object) -> str:
    """The runtime `why` of finding `id` (of its `case`, for an id reported for
    different reasons), with `fields` filled in. A missing id, case or field
    raises KeyError: tests/test_docs.py calls every emitter's lookup.

    The entries are loaded on the first call, not on import: `gpudoctor check`
    imports every check module, and most runs report few findings with a why."""
    from gpudoctor.catalog.findings import FINDINGS

    entry = FINDINGS[id]
    return _text(id, "says", entry.says, entry.cases, case).format(**fields)


def fix(id: str, case: str | None = None, **fields: object) -> str:
    """The runtime `fix` of finding `id` (the command or code line a user
    pastes), of its `case`, with `fields` filled in; loaded and checked like
    `why`. A fix built at run time from a list (the GPUs to reset, the pids to
    kill) takes the joined list as a field: the words stay here."""
    from gpudoctor.catalog.findings import FINDINGS

    entry = FINDINGS[id]
    return _text(id, "does", entry.does, entry.fix_cases, case).format(**fields)


def _text(id: str, name: str, one: str, cases: Mapping[str, str], case: str | None) -> str:
    """The entry's one text (`name`), or its text for `case`."""
    if case is not None:
        return cases[case]
    if not one:
        raise KeyError(f"{id} has cases, name one of {sorted(cases)}" if cases else f"{id} has no `{name}`")
    return one
