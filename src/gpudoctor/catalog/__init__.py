"""What gpudoctor can say, as data: one entry per finding id (what it means,
why it matters, the fix, which command reports it, and the sentence the code
puts in a finding's `why`). The pages under docs/ are generated from here
(`python -m gpudoctor.docs`); tests/test_docs.py fails when code emits an id
the catalog lacks, writes a `why` itself, or the pages and the catalog differ."""

from __future__ import annotations


def why(id: str, case: str | None = None, **fields: object) -> str:
    """The runtime `why` of finding `id` (of its `case`, for an id reported for
    different reasons), with `fields` filled in. A missing id, case or field
    raises KeyError: tests/test_docs.py calls every emitter's lookup.

    The entries are loaded on the first call, not on import: `gpudoctor check`
    imports every check module, and most runs report few findings with a why."""
    from gpudoctor.catalog.findings import FINDINGS

    entry = FINDINGS[id]
    if case is None:
        if not entry.says:
            raise KeyError(f"{id} has cases, name one of {sorted(entry.cases)}" if entry.cases else f"{id} has no `says`")
        text = entry.says
    else:
        text = entry.cases[case]
    return text.format(**fields)
