"""Whole programs: each fixture marks the lines lint must flag with
`# expect: rule-id[, rule-id]` (flake8-bugbear's habit), and lint must flag
exactly those. The correct torchrun, mp.spawn and Trainer-class scripts
carry no marks: any diagnostic there is a false alarm."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudoctor.linter import engine
from gpudoctor.linter.rules import BY_ID, CHECKS

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
EXPECT = re.compile(r"#\s*expect:\s*([a-z0-9, -]+)$")


@pytest.fixture(autouse=True)
def loud_rules(monkeypatch):
    monkeypatch.setattr(engine, "RAISE_RULE_ERRORS", True)


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = EXPECT.search(line)
        if match:
            out |= {(n, rule.strip()) for rule in match.group(1).split(",") if rule.strip()}
    return out


def found(path: Path) -> set[tuple[int, str]]:
    return {(d.line, d.rule) for d in engine.lint_file(str(path))}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_fixture_diagnostics_are_exactly_the_marked_ones(path):
    marks = expected(path)
    assert all(rule in BY_ID for _, rule in marks), "a mark names an unknown rule"
    assert found(path) == marks


@pytest.mark.parametrize("name", ["torchrun_correct.py", "spawn_correct.py", "trainer_class_correct.py"])
def test_idiomatic_scripts_are_clean(name):
    assert not expected(FIXTURES / name)
    assert not engine.lint_file(str(FIXTURES / name))


def test_every_rule_is_exercised_by_a_fixture():
    marked = {rule for path in FIXTURES.glob("*.py") for _, rule in expected(path)}
    assert marked == {rule.id for rule in CHECKS}


def test_examples_broken_and_fixed_twins():
    broken = engine.lint_file(str(ROOT / "examples" / "train_broken.py"))
    fixed = engine.lint_file(str(ROOT / "examples" / "train_fixed.py"))
    assert fixed == []
    rules = {d.rule for d in broken}
    # (no nccl-no-set-device: the script names each rank's GPU, torch.device("cuda", local_rank))
    assert {"deprecated-launch", "local-rank-arg", "sampler-no-set-epoch",
            "save-all-ranks", "save-ddp-wrapper", "tensor-to-unassigned"} <= rules
