"""`--markdown`: a report to paste into a bug report."""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpudoctor.core.version import __version__
from gpudoctor.core.findings import Report, Severity
from gpudoctor.render.console import summary
from gpudoctor.render.escape import Markdown, md_block, md_code, md_text
from gpudoctor.render.finding_text import format_value

ICONS = {Severity.OK: "✅", Severity.INFO: "ℹ️", Severity.WARN: "⚠️", Severity.ERROR: "❌"}


def cell(value) -> str:
    if isinstance(value, Markdown):
        return re.sub(r"(?<!\\)\|", r"\\|", value)  # GFM splits a row at a bare | even inside a code span
    return "<br>".join(md_text(line) for line in format_value(value).split("\n"))


def table(headers: list[str], rows: Iterable[Iterable]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def report_markdown(report: Report, sections: Iterable[str] = (), strict: bool = False) -> str:
    status = "problems found" if report.failed(strict) else "healthy"
    out = [
        f"## gpudoctor {report.command} — {status}",
        "",
        f"gpudoctor {__version__}; {summary(report)}.",
        "",
    ]
    for section in sections:
        out += [section, ""]
    out += ["### Findings", ""]
    out.append(table(["", "id", "finding"], ((ICONS[f.severity], md_code(f.id), f.title) for f in report.findings)))
    problems = [f for f in report.findings if f.severity in (Severity.WARN, Severity.ERROR)]
    for f in problems:
        out += ["", f"#### {ICONS[f.severity]} {md_code(f.id)}: {md_text(f.title)}", ""]
        for key, value in f.evidence.items():
            text = format_value(value)
            if "\n" in text.strip("\n"):  # a traceback: a block, which no line of it can end
                out += [f"- **{md_text(str(key))}**:", "", *md_block(text.strip("\n"), indent="  ")]
            else:
                out.append(f"- **{md_text(str(key))}**: {md_code(text.strip())}")
        if f.why:
            out += ["", f"Why: {md_text(f.why)}"]
        if f.fix:
            out += ["", "Fix:", "", *md_block(f.fix)]
    return "\n".join(out) + "\n"
