"""What diagnose adds to the shared renderers: the first-failure line on top."""

from __future__ import annotations

from rich.text import Text

from gpudoctor.diagnose.run import header
from gpudoctor.findings import Report


def rich_header(report: Report) -> list:
    line = header(report)
    scanned = f"read {report.data.get('lines', 0)} line(s) from {len(report.data.get('sources') or [])} source(s)"
    out = [Text(scanned, style="dim")]
    if line:
        out.append(Text(line, style="bold"))
    out.append(Text(""))
    return out


def markdown_sections(report: Report) -> list[str]:
    line = header(report)
    return [f"**{line}**"] if line else []
