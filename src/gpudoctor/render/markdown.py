"""`--markdown`: a report to paste into a bug report."""

from __future__ import annotations

from collections.abc import Iterable

from gpudoctor import __version__
from gpudoctor.findings import Report, Severity
from gpudoctor.render.console import format_value, summary

ICONS = {Severity.OK: "✅", Severity.INFO: "ℹ️", Severity.WARN: "⚠️", Severity.ERROR: "❌"}


def cell(value) -> str:
    return format_value(value).replace("|", "\\|").replace("\n", "<br>")


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
    out.append(table(["", "id", "finding"], ((ICONS[f.severity], f"`{f.id}`", f.title) for f in report.findings)))
    problems = [f for f in report.findings if f.severity in (Severity.WARN, Severity.ERROR)]
    for f in problems:
        out += ["", f"#### {ICONS[f.severity]} `{f.id}`: {f.title}", ""]
        for key, value in f.evidence.items():
            out.append(f"- **{key}**: `{format_value(value)}`")
        if f.why:
            out += ["", f"Why: {f.why}"]
        if f.fix:
            out += ["", "Fix:", "", "```", f.fix, "```"]
    return "\n".join(out) + "\n"
