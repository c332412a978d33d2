"""One function per kind of registry, each returning the pages of its folder
under docs/ ({file name: text}), plus the list docs/README.md shows for it.

A new kind (failure patterns, say): a function that renders its registry's
entries, and a `Kind` line in KINDS. The generator writes the folder, removes
pages no entry has any more, and keeps the README's list between its markers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpudoctor.catalog.entry import FindingDoc


@dataclass(frozen=True)
class Kind:
    folder: str  # under docs/
    title: str  # the README section that lists the pages
    pages: Callable[[], dict[str, str]]


def said(e: FindingDoc) -> str:
    """The `why` the code prints (catalog.why), under the entry's own "Why it matters":
    generated from the same text, so the page and the output cannot disagree.
    "{name}" marks a value filled in at run time."""
    return _output(e.says, e.cases, code=False)


def pasted(e: FindingDoc) -> str:
    """The `fix` the code prints (catalog.fix), under the entry's own "Fix", the same way."""
    return _output(e.does, e.fix_cases, code=True)


def _output(one: str, cases: Mapping[str, str], code: bool) -> str:
    """The entry's one text, or its text per case: a sentence quoted, a command as code."""
    texts = [one] if one else list(cases.values())
    filled = " (`{...}`: filled in when it is reported)" if any("{" in t for t in texts) else ""
    if one:
        return f"In gpudoctor's output{filled}:\n\n" + (f"```\n{one}\n```" if code else f"> {one}")
    if cases:
        return f"In gpudoctor's output, by case{filled}:\n\n" + "\n".join(
            f"- `{case}`: {_inline(text) if code else text}" for case, text in cases.items()
        )
    return ""


def _inline(text: str) -> str:
    """A command as inline code (a command holding a backtick gets a double one)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def finding_page(e: FindingDoc) -> str:
    sections = [("Evidence", e.evidence), ("Why it matters", "\n\n".join(t for t in (e.why, said(e)) if t))]
    if e.checked:
        sections.append(("How it is checked", e.checked))
    sections.append(("Fix", "\n\n".join(t for t in (e.fix, pasted(e)) if t)))
    out = [
        f"# `{e.id}`",
        f"**Severity:** {e.severity} · **Area:** {e.area} · **Command:** {e.emitted_by}",
        e.summary,
    ]
    out += [f"## {title}\n\n{body}" for title, body in sections]
    return "\n\n".join(out) + "\n"


def finding_pages() -> dict[str, str]:
    from gpudoctor.catalog.findings import FINDINGS

    return {f"{id}.md": finding_page(e) for id, e in sorted(FINDINGS.items())}


def rule_pages() -> dict[str, str]:
    """What `gpudoctor lint --explain ID` prints, from the rule class itself."""
    from gpudoctor.linter.explain import rule_page
    from gpudoctor.linter.rules import ALL

    return {f"{rule.id}.md": rule_page(rule) for rule in sorted(ALL, key=lambda r: r.id)}


def pattern_pages() -> dict[str, str]:
    """What `gpudoctor diagnose --explain ID` prints, from the failure pattern itself."""
    from gpudoctor.commands.diagnose.pattern_page import pattern_page
    from gpudoctor.knowledge.patterns import ALL

    return {f"{p.id}.md": pattern_page(p) for p in sorted(ALL, key=lambda p: p.id)}


KINDS = (
    Kind("findings", "Findings", finding_pages),
    Kind("rules", "Lint rules", rule_pages),
    Kind("patterns", "Log patterns", pattern_pages),
)


def index_list(kind: Kind, names: list[str]) -> str:
    """The README's list of a kind's pages: one link per page, in file name order."""
    return "".join(f"- [`{n[:-3]}`]({kind.folder}/{n})\n" for n in sorted(names))
