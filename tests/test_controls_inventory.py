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


def by_verdict(counts: dict[str, dict[str, int]], known: set[str]) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """The classes grouped under the verdict they test: the longest verdict id their
    name starts with (`distributed-env-incomplete-slurm` tests `distributed-env-incomplete`
    under Slurm); the rest test a behaviour that gives no verdict of its own (how a paste
    is read, what threads the ranks get), returned apart."""
    verdicts: dict[str, dict[str, int]] = {}
    behaviours: dict[str, dict[str, int]] = {}
    for name, c in counts.items():
        ids = [k for k in known if name == k or name.startswith(k + "-")]
        if ids:
            entry = verdicts.setdefault(max(ids, key=len), {"control": 0, "sibling": 0})
            entry["control"] += c["control"]
            entry["sibling"] += c["sibling"]
        else:
            behaviours[name] = c
    return verdicts, behaviours


def test_every_controls_class_has_a_control_and_a_sibling() -> None:
    counts = inventory()
    assert counts, "tests/controls/ holds no controls"
    lacking = sorted(v for v, c in counts.items() if not (c["control"] and c["sibling"]))
    assert not lacking, f"classes in tests/controls/ without a control and a sibling test: {lacking}"
    verdicts, _ = by_verdict(counts, known_verdicts())
    assert verdicts, "no class in tests/controls/ is named after a verdict"


if __name__ == "__main__":
    known = known_verdicts()
    verdicts, behaviours = by_verdict(inventory(), known)
    for verdict, c in sorted(verdicts.items()):
        print(f"{verdict:44} controls {c['control']:2}  siblings {c['sibling']:2}")
    for name, c in sorted(behaviours.items()):
        print(f"{name:44} controls {c['control']:2}  siblings {c['sibling']:2}  (a behaviour, no verdict id)")
    print(f"{len(verdicts)} of {len(known)} verdict ids have a control and a sibling test in tests/controls/; "
          f"{len(behaviours)} behaviours too")
