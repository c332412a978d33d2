"""Every rule's own VALID and INVALID examples, run through the real engine
(the Fixit habit: a rule carries the examples that prove it), plus the
contract every rule module keeps: an id, a page, a message, a fix."""

from __future__ import annotations

import codecs
import importlib
import re
import textwrap

import pytest

from gpudoctor.linter import engine
from gpudoctor.linter.explain import example_code, rule_page
from gpudoctor.linter.rule import FLAGGED
from gpudoctor.linter.rules import ALL, BY_ID

COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)


@pytest.fixture(autouse=True)
def loud_rules(monkeypatch):
    # A rule that fails must fail the test, not go quiet.
    monkeypatch.setattr(engine, "RAISE_RULE_ERRORS", True)


def encoded(code: str) -> bytes:
    """The example as a file on disk: in the encoding its coding cookie
    names when that codec exists and can hold it, else UTF-8."""
    match = COOKIE.search("\n".join(code.splitlines()[:2]))
    if match:
        try:
            codecs.lookup(match.group(1))
            return code.encode(match.group(1))
        except (LookupError, UnicodeEncodeError):
            pass
    return code.encode("utf-8")


def flagged_lines(rule_id: str, code: str) -> list[int]:
    found = engine.lint_source(encoded(code), "example.py", [BY_ID[rule_id]])
    assert all(d.rule == rule_id for d in found)
    return sorted({d.line for d in found})


EXAMPLES = [
    pytest.param(rule.id, kind, example_code(code), id=f"{rule.id}-{kind}-{i}")
    for rule in ALL
    for kind, codes in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for i, code in enumerate(codes)
]


@pytest.mark.parametrize("rule_id,kind,code", EXAMPLES)
def test_rule_example(rule_id, kind, code):
    expected = [n for n, line in enumerate(code.splitlines(), 1) if FLAGGED in line]
    if kind == "valid":
        assert not expected, "a VALID example marks no line"
    else:
        assert expected, "an INVALID example marks the lines it expects with '# flagged'"
    assert flagged_lines(rule_id, code) == expected


@pytest.mark.parametrize("rule", ALL, ids=lambda r: r.id)
def test_rule_contract(rule):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.id)
    # one module per rule, named after its id
    module = importlib.import_module(f"gpudoctor.linter.rules.{rule.id.replace('-', '_')}")
    assert type(rule).__module__ == module.__name__
    assert rule.message and rule.fix and "\n" not in rule.fix
    assert rule.why() and len(rule.documentation().split("\n\n")) >= 2
    assert rule.VALID and rule.INVALID


# docs/rules/<id>.md is rule_page(rule): tests/test_docs.py checks every generated page.


def test_page_shows_bad_and_good_examples():
    page = rule_page(BY_ID["sampler-no-set-epoch"])
    assert page.startswith("# sampler-no-set-epoch\n")
    assert "## Flagged" in page and "## Not flagged" in page
    assert "sampler.set_epoch(epoch)" in page
    assert textwrap.dedent(BY_ID["sampler-no-set-epoch"].INVALID[0]).strip() in page


def test_collective_stems_cover_every_collective_name():
    # The text test skips a stem's names when the stem is absent: a name under no stem would never be seen.
    from gpudoctor.linter.rules.collective_under_rank_condition import CALLED, CALLED_BY_STEM

    assert {n for _, names in CALLED_BY_STEM for n in names} == set(CALLED)
