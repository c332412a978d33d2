"""A pattern's page: what `gpudoctor diagnose --explain ID` prints and what
docs/patterns/<id>.md holds (`python -m gpudoctor.docs` writes it from the pattern itself)."""

from __future__ import annotations

from gpudoctor.knowledge.pattern import CONSEQUENCE, HARMLESS, Pattern
from gpudoctor.knowledge.setting_fix import rows_for

ROLE_WORDS = {
    "cause": "a failure in its own right",
    CONSEQUENCE: "usually a consequence of another failure",
    HARMLESS: "safe to ignore (or only advice)",
}


def pattern_page(p: Pattern) -> str:
    out = [
        f"# {p.id}",
        "",
        f"**{p.title}**",
        "",
        f"Family: {p.family} · severity: {p.severity.value} · role: {p.role} ({ROLE_WORDS[p.role]})",
        "",
        "## Why",
        "",
        p.why,
        "",
        "## Fix",
        "",
        "```",
        p.fix,
        "```",
    ]
    rows = rows_for(p.id)
    if rows:
        out += ["", "## In another setting", "", "Where the log shows one of these settings (knowledge/setting.py), the fix is the setting's:", ""]
        for row in rows:
            out += [f"- {row.shows}:", "", "  ```", f"  {row.fix}", "  ```"]
    explained = [a for a in p.after if a != "*"]
    if "*" in p.after or explained:
        out += ["", "## Usually caused by", ""]
        if "*" in p.after:
            out.append("- any failure of another rank found in the same log (it is then listed first)")
        out += [f"- [`{a}`]({a}.md)" for a in explained]
    out += ["", "## Matches lines like", ""]
    for ex in p.examples:
        out += ["```", ex.line, "```", f"Source: {ex.source}", ""]
    out.pop()
    out += ["", f"`gpudoctor diagnose --explain {p.id}` prints this page."]
    return "\n".join(out) + "\n"
