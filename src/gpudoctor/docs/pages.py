"""One function per kind of registry, each returning the pages of its folder
under docs/ ({file name: text}), plus the list docs/README.md shows for it.

A new kind (failure patterns, say): a function that renders its registry's
entries, and a `Kind` line in KINDS. The generator writes the folder, removes
pages no entry has any more, and keeps the README's list between its markers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.catalog.kind import FindingKind


@dataclass(frozen=True)
class Kind:
    folder: str  # under docs/
    title: str  # the README section that lists the pages
    pages: Callable[[], dict[str, str]]


def _output(k: FindingKind, name: str, code: bool) -> str:
    """The kind's `name` (why or fix) as the output prints it: one text, or one per case;
    a sentence quoted, a command as code. "{name}" marks a value filled in at run time."""
    texts = k.texts(name)
    filled = " (`{...}`: filled in when it is reported)" if any("{" in t for t in texts.values()) else ""
    if list(texts) == [""]:
        one = texts[""]
        return f"In gpudoctor's output{filled}:\n\n" + (f"```\n{one}\n```" if code else f"> {one}")
    if texts:
        return f"In gpudoctor's output, by case{filled}:\n\n" + "\n".join(
            f"- `{case}`: {_inline(text) if code else text}" for case, text in texts.items()
        )
    return ""


def _inline(text: str) -> str:
    """A command as inline code (a command holding a backtick gets a double one)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def finding_page(k: FindingKind) -> str:
    """The page of one kind: the sentences the output prints, then the page's own paragraph."""
    sections = [("Evidence", k.evidence), ("Why it matters", _joined(_output(k, "why", code=False), k.more_why))]
    if k.checked:
        sections.append(("How it is checked", k.checked))
    sections.append(("Fix", _joined(_output(k, "fix", code=True), k.more_fix)))
    out = [
        f"# `{k.id}`",
        f"**Severity:** {k.severity_text} · **Area:** {k.area} · **Command:** {k.emitted_by}",
        k.summary,
    ]
    out += [f"## {title}\n\n{body}" for title, body in sections]
    return "\n\n".join(out) + "\n"


def _joined(*parts: str) -> str:
    return "\n\n".join(p for p in parts if p)


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
