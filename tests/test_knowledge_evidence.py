"""The failure detector's line rules (issue 35 item 2): each rule's real lines show a failure,
its look-alikes do not, and every example reaches the detector through the prefilter."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.evidence import RULES, evidence_in
from gpudoctor.knowledge.prefilter import has_trigger

EXAMPLES = [(rule.kind, line) for rule in RULES for line in rule.examples]
NOT_EXAMPLES = [(rule.kind, line) for rule in RULES for line in rule.not_examples]


@pytest.mark.parametrize(("kind", "line"), EXAMPLES)
def test_a_rules_real_lines_show_a_failure(kind, line):
    found = evidence_in(line)
    assert found is not None and found[0] == kind


@pytest.mark.parametrize(("kind", "line"), NOT_EXAMPLES)
def test_a_rules_look_alikes_show_none(kind, line):
    found = evidence_in(line)
    assert found is None or found[0] != kind


@pytest.mark.parametrize(("kind", "line"), EXAMPLES)
def test_every_example_passes_the_prefilter(kind, line):
    assert has_trigger(line)
