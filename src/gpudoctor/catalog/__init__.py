"""What gpudoctor can say, as data: one FindingKind per finding id (catalog/kind.py),
declared in its area's module under catalog/findings/. Emitters import the kind and
call it; the pages under docs/ are generated from the same kinds (`python -m
gpudoctor.docs`), so a page and the output say the same sentences. tests/test_docs.py
fails when code emits an id the catalog lacks or the pages and the catalog differ."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind


def kind_of(id: str) -> FindingKind:
    """The kind of finding `id`, for an emitter that picks the id at run time."""
    from gpudoctor.catalog.findings import FINDINGS

    return FINDINGS[id]

