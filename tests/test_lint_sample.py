"""The sampled corpus of user scripts (issue 41) and its scorer,
benchmarks/lint_sample.py: the manifest is well formed, every expected line
exists, and the scorer pairs diagnostics with expectations by rule and line
(a real lint subprocess on real files)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "fixtures" / "lint_sample" / "dev"


def scorer():
    spec = importlib.util.spec_from_file_location("lint_sample", ROOT / "benchmarks" / "lint_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_manifest_is_well_formed_and_points_at_real_lines():
    cases = json.loads((DEV / "manifest.json").read_text(encoding="utf-8"))
    assert len(cases) >= 80 and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        lines = (DEV / case["file"]).read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# source: ")
        assert {"id", "file", "source", "project_or_forum", "date", "source_kind", "verdict_from_thread",
                "expected"} <= set(case)
        for e in case["expected"]:
            assert e["severity"] in ("error", "warning") and 1 <= e["line"] <= len(lines) and e["why"]


def test_scorer_pairs_by_rule_and_line_and_counts_misses_and_false_alarms(tmp_path):
    (tmp_path / "a.py").write_text(
        "# source: test\nimport os\nimport torch\nimport torch.distributed as dist\n\n"
        "os.environ['MASTER_PORT'] = '12355'\ndist.init_process_group('gloo')\ntorch.save({}, 'x.pt')\n")
    (tmp_path / "b.py").write_text("# source: test\nx = (\n")
    (tmp_path / "manifest.json").write_text(json.dumps([
        {"id": "a", "file": "a.py", "expected": [
            {"line": 7, "pitfall": "hardcoded-master-port", "severity": "warning", "why": "literal"},  # within 2 lines
            {"line": 8, "pitfall": "torch-load-no-map-location", "severity": "warning", "why": "not there"},
            {"line": 8, "pitfall": "no-such-rule-yet", "severity": "error", "why": "unclaimed"}]},
        {"id": "b", "file": "b.py", "expected": []}]))
    result = scorer().score(tmp_path)
    assert result["rules"]["hardcoded-master-port"] == {"tp": 1, "fp": 0, "fn": 0}
    assert result["rules"]["save-all-ranks"] == {"tp": 0, "fp": 1, "fn": 0}
    assert result["rules"]["torch-load-no-map-location"] == {"tp": 0, "fp": 0, "fn": 1}
    assert result["unclaimed"] == ["a:8 no-such-rule-yet (error)"]
    assert result["not_scored"] == ["b:2 syntax-error"]


def test_dev3_manifest_is_well_formed_and_points_at_real_lines():
    part = ROOT / "tests" / "fixtures" / "lint_sample" / "dev3"
    cases = json.loads((part / "manifest.json").read_text(encoding="utf-8"))
    assert len(cases) >= 80 and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        lines = (part / case["file"]).read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# source: ") and lines[1].startswith("# restated")
        for e in case["expected"]:
            assert e["severity"] in ("error", "warning") and 1 <= e["line"] <= len(lines) and e["why"]


def test_scorer_reads_a_readers_older_name_as_the_rule_that_claims_it(tmp_path):
    (tmp_path / "a.py").write_text(
        "# source: test\nimport torch.distributed as dist\n\ndist.broadcast_multigpu(tensors, src=0)\n")
    (tmp_path / "manifest.json").write_text(json.dumps([
        {"id": "a", "file": "a.py", "expected": [
            {"line": 4, "pitfall": "multigpu-collective", "severity": "warning", "why": "removed in torch 2.2"}]}]))
    result = scorer().score(tmp_path)
    assert result["rules"]["removed-distributed-api"] == {"tp": 1, "fp": 0, "fn": 0}
    assert result["renamed"] == ["a:4 multigpu-collective -> removed-distributed-api"]
    assert result["unclaimed"] == []


def test_scorer_counts_a_readers_syntax_error_apart_like_lints(tmp_path):
    # lint's syntax-error is never scored, so a reader's could never be matched: it used to count as a miss
    (tmp_path / "b.py").write_text("# source: test\nx = (\n")
    (tmp_path / "manifest.json").write_text(json.dumps([
        {"id": "b", "file": "b.py", "expected": [
            {"line": 2, "pitfall": "syntax-error", "severity": "error", "why": "cut off"}]}]))
    result = scorer().score(tmp_path)
    assert "syntax-error" not in result["rules"] and result["misses"] == []
    assert result["not_scored"] == ["b:2 syntax-error", "b:2 syntax-error (reader)"]


def test_scorer_matches_expected_lines_against_every_line_a_diagnostic_names():
    # one cause said once (lint heldout17 u062: two folders made on every rank, the reader wrote each): the
    # diagnostic at the first finds both, one right diagnostic; its other places never take another's pitfall
    expected = [{"line": 167, "pitfall": "mkdir-race-all-ranks"}, {"line": 171, "pitfall": "mkdir-race-all-ranks"},
                {"line": 300, "pitfall": "mkdir-race-all-ranks"}]
    one = {"line": 167, "rule": "mkdir-race-all-ranks", "also": [171, 301]}
    other = {"line": 299, "rule": "mkdir-race-all-ranks"}
    pairs = scorer().match(expected, [one, other])
    assert [(e["line"], d["line"], bool(d.get("also_pair"))) for e, d in pairs if e and d] == [
        (167, 167, False), (300, 299, False), (171, 167, True)]
    assert not [p for p in pairs if p[0] is None or p[1] is None]
