"""tests/hang_corpus/ is whole and its verdicts are data written before any run
(benchmarks/hang_corpus.py runs the cases for real and prints the scores)."""

import hashlib
import json
import os
import re

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hang_corpus")
FINDINGS = {"collective-mismatch", "collective-deadlock", "collective-missing", "uneven-collectives", "collective-stall",
            "rank-raised", "rank-crashed", "rank-never-joined"}  # fmt: skip


def test_every_case_has_its_source_its_marks_and_a_verdict_split_by_a_stable_rule():
    with open(os.path.join(CORPUS, "expected.json")) as fh:
        expected = json.load(fh)
    files = sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".py"))
    assert files == sorted(expected)
    failing = [n for n, e in expected.items() if e["exit"] != 0]
    assert len(failing) >= 40 and len(expected) - len(failing) >= 10
    assert {e["nproc"] for e in expected.values()} == {2, 3}
    for name, e in expected.items():
        text = open(os.path.join(CORPUS, f"{name}.py")).read()
        assert re.match(r"# Modelled on: https?://\S+\n", text), name
        assert e["source"] in text.splitlines()[0]
        marks = set(re.findall(r"# @([A-Z])\b", text))
        assert set(e["lines"]) <= marks, name
        assert set(e["finding"]) <= FINDINGS, name
        held = int(hashlib.sha1(name.encode()).hexdigest(), 16) % 4 == 0
        assert e["split"] == ("held-out" if held else "dev"), name
    assert 0.2 <= sum(e["split"] == "held-out" for e in expected.values()) / len(expected) <= 0.3
