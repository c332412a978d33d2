"""The default report: grouped by area, one ✓ / ! / ✗ line per finding (the
`flutter doctor` habit), evidence and fix under each problem, a verdict last."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from gpudoctor.core.findings import UNDECIDED, UNFINISHED, Finding, Report, Severity
from gpudoctor.render.escape import Shown
from gpudoctor.render.finding_text import MARKS, finding_pieces


class Indented:
    """A line that keeps its indent when it wraps: `fix:` and `why:` lines wrapped by a
    narrow terminal would otherwise go on from column 0, under the area headings. A line
    that fits, or one that is not wrapped at all (a log: soft wrap), is drawn as it is."""

    def __init__(self, text: Text):
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text, width = self.text, options.max_width
        indent = len(text.plain) - len(text.plain.lstrip(" "))
        if options.no_wrap or not indent or text.cell_len <= width or indent > width // 2:
            yield text
            return
        lead = text.get_style_at_offset(console, 0)
        for line in text[indent:].wrap(console, width - indent):
            yield Text.assemble((" " * indent, lead), line)


def finding_lines(f: Finding, verbose: bool = False) -> RenderableType:
    """render/finding_text.py's lines of one finding, drawn with rich."""
    return Group(*(Indented(Text.assemble(*line)) for line in finding_pieces(f, verbose)))


def summary(report: Report) -> str:
    c = report.counts()
    return f"{c['error']} error(s), {c['warn']} warning(s), {c['ok']} passed"


def verdict(report: Report, strict: bool = False) -> Text:
    c = report.counts()
    summary_text = summary(report)
    if not c["error"] and any(f.id in UNFINISHED for f in report.findings):
        # stopped while still moving: not a hang, and not a finished, healthy run either
        return Text(f"! {report.command}: ran out of time, not finished — {summary_text}", style="bold yellow")
    if report.failed(strict) and not c["error"] and any(f.id in UNDECIDED for f in report.findings):
        # no failure that decides it and no sign of health either: exit 1, said as what it is (not "no failure
        # shown": the answer may keep a failure it could not call the run's end, one the job went on past)
        return Text(f"? {report.command}: not decided (no failure that ended the run, no end shown) — {summary_text}", style="bold yellow")
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
