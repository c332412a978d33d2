"""The default report: grouped by area, one ✓ / ! / ✗ line per finding (the
`flutter doctor` habit), evidence and fix under each problem, a verdict last."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.text import Text

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.render.escape import Shown

MARKS = {
    Severity.OK: ("✓", "green"),
    Severity.INFO: ("•", "cyan"),
    Severity.WARN: ("!", "yellow"),
    Severity.ERROR: ("✗", "red"),
}


def format_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) if value else "[]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items()) or "{}"
    if value is None:
        return "unset"
    return str(value)


def finding_lines(f: Finding, verbose: bool = False) -> RenderableType:
    mark, style = MARKS[f.severity]
    head = Text.assemble(("  " + mark + " ", f"bold {style}"), (f.title, ""), (f"  [{f.id}]", "dim"))
    parts: list[RenderableType] = [head]
    problem = f.severity in (Severity.WARN, Severity.ERROR)
    if f.evidence and (problem or verbose or f.severity is Severity.INFO):
        for key, value in f.evidence.items():
            text = format_value(value)
            lines = text.splitlines() or [""]
            parts.append(Text(f"      {key}: {lines[0]}", style="dim"))
            for line in lines[1:]:
                parts.append(Text(f"        {line}", style="dim"))
    if problem and f.why:
        parts.append(Text(f"      why: {f.why}"))
    if problem and f.fix:
        parts.append(Text.assemble(("      fix: ", "bold"), (f.fix, "bold " + style)))
    return Group(*parts)


def summary(report: Report) -> str:
    c = report.counts()
    return f"{c['error']} error(s), {c['warn']} warning(s), {c['ok']} passed"


def verdict(report: Report, strict: bool = False) -> Text:
    c = report.counts()
    summary_text = summary(report)
    if report.failed(strict):
        return Text(f"✗ {report.command}: problems found — {summary_text}", style="bold red")
    if c["warn"]:
        return Text(f"! {report.command}: healthy, with warnings — {summary_text}", style="bold yellow")
    return Text(f"✓ {report.command}: healthy — {summary_text}", style="bold green")


def report_renderable(
    report: Report,
    extra: Iterable[RenderableType] = (),
    strict: bool = False,
    verbose: bool = False,
) -> RenderableType:
    areas: dict[str, list[Finding]] = {}
    for f in report.findings:
        areas.setdefault(f.area, []).append(f)
    parts: list[RenderableType] = list(extra)
    for area, items in areas.items():
        worst = max((f.severity for f in items), key=lambda s: s.rank)
        mark, style = MARKS[worst]
        parts.append(Text.assemble((f"[{mark}] ", f"bold {style}"), (area, "bold")))
        parts.extend(finding_lines(f, verbose) for f in items)
    parts.append(Text(""))
    parts.append(verdict(report, strict))
    return Group(*parts)


def print_report(console: Console, report: Report, extra=(), strict=False, verbose=False) -> None:
    console.print(Shown(report_renderable(report, extra, strict, verbose)))  # log text is someone else's
