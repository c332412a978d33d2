"""A rule's documentation page, rendered from the rule itself: what
`gpudoctor lint --explain ID` prints and what docs/rules/<id>.md holds
(written by `python -m gpudoctor.docs`)."""

from __future__ import annotations

import textwrap

from gpudoctor.linter.rule import Rule


def example_code(code: str) -> str:
    return textwrap.dedent(code).strip("\n") + "\n"


def rule_page(rule: Rule) -> str:
    where = "" if rule.in_tests else " Not run on test files (pytest's `test_*.py`, `*_test.py`, `conftest.py`)."
    if rule.opt_in:
        where += (f" Advice, opt-in: not in the default run; it runs where it is named (`gpudoctor lint --extend-select "
                  f"{rule.id}` beside the default rules, `--select {rule.id},...`, or `extend-select` / `select` in "
                  "`[tool.gpudoctor.lint]`).")
    out = [f"# {rule.id}", "", f"**{rule.message}**", "", f"Severity: **{rule.severity}**.{where}", "",
           rule.documentation(), "", "## Fix", "", "```", rule.fix, "```"]
    if rule.INVALID:
        out += ["", "## Flagged", ""]
        for code in rule.INVALID:
            out += ["```python", example_code(code).rstrip("\n"), "```", ""]
        out.pop()
    if rule.VALID:
        out += ["", "## Not flagged", ""]
        for code in rule.VALID:
            out += ["```python", example_code(code).rstrip("\n"), "```", ""]
        out.pop()
    out += ["", f"Suppress one line with `# gpudoctor: ignore[{rule.id}]`; skip the rule with "
            f"`gpudoctor lint --ignore {rule.id}`."]
    return "\n".join(out) + "\n"


def rule_list() -> str:
    """Every rule on one line: its id, severity and what it finds."""
    from gpudoctor.linter.rules import ALL

    width = max(len(r.id) for r in ALL)
    lines = [f"{r.id:<{width}}  {r.severity:<7}  {r.message}{' (opt-in: --select ' + r.id + ')' if r.opt_in else ''}"
             for r in ALL]
    return "\n".join(lines) + "\nMore on one: gpudoctor lint --explain ID\n"
