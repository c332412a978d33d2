"""What diagnose adds to the shared renderers: the first-failure line on top."""

from __future__ import annotations

from rich.text import Text

from gpudoctor.commands.diagnose.analyse import header
from gpudoctor.core.findings import Report
from gpudoctor.render.escape import md_text


def rich_header(report: Report) -> list:
    line = header(report)
    scanned = read_line(report)
    out = [Text(scanned, style="dim")]
    if line:
        out.append(Text(line, style="bold"))
    out.append(Text(""))
    return out


def read_line(report: Report) -> str:
    """What was read, and what was not: 'read 120 line(s) from 3 source(s); 2 empty; 1 not read'."""
    data = report.data
    if data.get("outcome"):
        return f"read {data['outcome']} and the traces of {len(data.get('ranks') or data.get('sources') or [])} rank(s): the verdict gpudoctor gave when the job ended"
    out = f"read {data.get('lines', 0)} line(s) from {len(data.get('sources') or [])} source(s)"
    if data.get("empty"):
        out += f"; {len(data['empty'])} empty file(s)"
    if data.get("not_read"):
        out += f"; {len(data['not_read'])} item(s) not read (listed below)"
    return out


def markdown_sections(report: Report) -> list[str]:
    line = header(report)
    return [read_line(report)] + ([f"**{md_text(line)}**"] if line else [])
