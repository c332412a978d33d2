"""The recorded verdicts on lint's diagnostics over public training code
(benchmarks/lint_precision.py recomputes them when the corpus is present):
well formed, names and lines only, and precise enough."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpudoctor.linter.rules import BY_ID

VERDICTS = Path(__file__).resolve().parent / "fixtures" / "lint_corpus_verdicts.json"
FIELDS = {"repo", "commit", "path", "line", "rule", "verdict", "reason"}


def test_verdicts_are_well_formed_and_hold_no_code():
    data = json.loads(VERDICTS.read_text(encoding="utf-8"))
    assert data["repos"] and all(re.fullmatch(r"[0-9a-f]{40}", c) for c in data["repos"].values())
    for v in data["verdicts"] + data["resolved"]:
        assert set(v) == FIELDS
        assert v["repo"] in data["repos"] and v["commit"] == data["repos"][v["repo"]]
        assert v["rule"] in BY_ID and v["verdict"] in ("right", "wrong")
        assert isinstance(v["line"], int) and v["line"] > 0 and v["path"].endswith(".py")
        assert "\n" not in v["reason"] and len(v["reason"]) < 300


def test_precision_on_the_corpus_is_at_least_095():
    verdicts = json.loads(VERDICTS.read_text(encoding="utf-8"))["verdicts"]
    right = sum(v["verdict"] == "right" for v in verdicts)
    assert right / len(verdicts) >= 0.95
