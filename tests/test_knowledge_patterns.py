"""Every failure pattern's own examples, run through the real matcher and the
real prefilter (the lint-rule habit: a pattern carries the lines that prove it),
plus the contract every pattern keeps: an id, a page, a why, a one-line fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudoctor.commands.diagnose.pattern_page import pattern_page
from gpudoctor.knowledge.prefilter import has_trigger
from gpudoctor.knowledge.lines import strip
from gpudoctor.knowledge.pattern import FAMILIES, ROLES
from gpudoctor.knowledge.patterns import ALL, BY_ID

DOCS = Path(__file__).resolve().parents[1] / "docs" / "patterns"

EXAMPLES = [pytest.param(p.id, ex.line, id=f"{p.id}-{i}") for p in ALL for i, ex in enumerate(p.examples)]
NOT_EXAMPLES = [pytest.param(p.id, line, id=f"{p.id}-not-{i}") for p in ALL for i, line in enumerate(p.not_examples)]


def first_claim(text: str) -> str | None:
    """The id of the pattern that claims a line, as the diagnosis does (registry order)."""
    msg = strip(text).text
    return next((p.id for p in ALL if p.match(msg)), None)


@pytest.mark.parametrize("pattern_id,line", EXAMPLES)
def test_example_is_claimed_by_its_pattern(pattern_id, line):
    # a refinement's examples are the lines of the pattern it refines (the traceback decides); a refinement of the
    # unrecognised verdict's are lines no pattern claims (a bare AssertionError: its frame decides)
    refines = BY_ID[pattern_id].refines
    assert first_claim(line) == (None if refines == "unrecognised-failure" else refines or pattern_id)


@pytest.mark.parametrize("pattern_id,line", EXAMPLES)
def test_example_passes_the_prefilter(pattern_id, line):
    # the streaming reader only looks at lines with a trigger word
    assert has_trigger(line), f"add a trigger to knowledge/prefilter.py TRIGGERS for: {line}"


@pytest.mark.parametrize("pattern_id,line", NOT_EXAMPLES)
def test_look_alike_is_not_claimed(pattern_id, line):
    assert first_claim(line) != pattern_id


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.id)
def test_pattern_contract(p):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", p.id)
    assert p.family in FAMILIES and p.role in ROLES
    assert p.title and p.why and p.fix and "\n" not in p.fix
    assert p.examples and all(ex.source for ex in p.examples), "every example names its source thread"
    assert p.needles and all(any(n in ex.line for n in p.needles) for ex in p.examples)
    for after in p.after:
        assert after == "*" or after in BY_ID, after
    if p.role == "harmless":
        assert p.severity.value in ("info", "warn"), "a harmless line is at most a warning"


def test_ids_are_unique():
    assert len(BY_ID) == len(ALL)


def test_every_family_the_issue_lists_has_patterns():
    assert {p.family for p in ALL} == set(FAMILIES)


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.id)
def test_docs_page_is_the_patterns_page(p):
    page = DOCS / f"{p.id}.md"
    assert page.exists(), "regenerate the docs: python -m gpudoctor.docs"
    assert page.read_text(encoding="utf-8") == pattern_page(p)



def test_the_needle_gate_finds_every_needle():
    from gpudoctor.knowledge.pattern import needle_gate

    gate = needle_gate(ALL)
    for p in ALL:
        for needle in p.needles:
            assert gate.search(f"x {needle} y"), needle
    assert gate.search("epoch 3 step 10 loss 0.25 lr 3e-4") is None


def test_every_pattern_of_the_new_modules_has_a_counter_example():
    from gpudoctor.knowledge.patterns import capability, frameworks, launchers, network

    for module in (capability, frameworks, launchers, network):
        for p in module.PATTERNS:
            assert p.not_examples, f"{p.id}: add a look-alike line it must not claim"
