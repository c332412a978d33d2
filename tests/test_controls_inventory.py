"""The controls of every verdict, counted in one place (issue 34's method).

tests/controls/ holds, for each verdict id, one test class with at least one
`test_control_*` (the healthy input that looks most like the failure must not
get the verdict) and one `test_sibling_*` (the nearest input that needs another
verdict gets its own). This test keeps that shape honest: a class whose name
is not a verdict gpudoctor can give, or that lacks one of the two, fails.

`python tests/test_controls_inventory.py` prints the count per verdict."""

from __future__ import annotations

import ast
import re
from pathlib import Path

CONTROLS = Path(__file__).parent / "controls"


def known_verdicts() -> set[str]:
    """Every id a verdict can carry: findings, diagnose patterns, lint rules."""
    from gpudoctor.catalog.findings import FINDINGS
    from gpudoctor.knowledge.patterns import BY_ID as PATTERNS
    from gpudoctor.linter.rules import BY_ID as RULES

    return set(FINDINGS) | set(PATTERNS) | set(RULES)


def verdict_of(node: ast.ClassDef) -> str:
    """A class's verdict id: its `verdict = "..."` attribute, else its name
    (`TestAllreduceSlowLink` -> `allreduce-slow-link`)."""
    for stmt in node.body:
        if (
            isinstance(stmt, ast.Assign)
            and [getattr(t, "id", None) for t in stmt.targets] == ["verdict"]
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            return stmt.value.value
    words = re.findall(r"[A-Z][a-z0-9]*|[0-9]+", node.name.removeprefix("Test"))
    return "-".join(w.lower() for w in words)


def inventory() -> dict[str, dict[str, int]]:
    """{verdict id: {"control": n, "sibling": n, "file": ...}} over tests/controls/."""
    counts: dict[str, dict[str, int]] = {}
    for path in sorted(CONTROLS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.ClassDef) and node.name.startswith("Test")):
                continue
            entry = counts.setdefault(verdict_of(node), {"control": 0, "sibling": 0})
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for kind in ("control", "sibling"):
                        if item.name.startswith(f"test_{kind}"):
                            entry[kind] += 1
    return counts


def test_every_controls_class_names_a_verdict_and_has_both_tests() -> None:
    counts = inventory()
    assert counts, "tests/controls/ holds no controls"
    known = known_verdicts()
    unknown = sorted(v for v in counts if v not in known)
    assert not unknown, f"controls for verdicts gpudoctor cannot give: {unknown}"
    lacking = sorted(v for v, c in counts.items() if not (c["control"] and c["sibling"]))
    assert not lacking, f"verdicts without a control and a sibling test: {lacking}"


if __name__ == "__main__":
    rows = inventory()
    for verdict, c in sorted(rows.items()):
        print(f"{verdict:44} controls {c['control']:2}  siblings {c['sibling']:2}")
    print(f"{len(rows)} verdicts with controls; known verdict ids: {len(known_verdicts())}")
