"""A rule's documentation page, rendered from the rule itself: what
`gpudoctor lint --explain ID` prints and what docs/rules/<id>.md holds
(written by `python -m gpudoctor.docs`)."""

from __future__ import annotations

import textwrap

from gpudoctor.lint.rule import Rule


def example_code(code: str) -> str:
    return textwrap.dedent(code).strip("\n") + "\n"


def rule_page(rule: Rule) -> str:
    out = [f"# {rule.id}", "", f"**{rule.message}**", "", rule.documentation(), "", "## Fix", "", "```", rule.fix, "```"]
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
