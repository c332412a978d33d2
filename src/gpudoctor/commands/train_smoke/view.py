"""What the train-smoke report shows above its verification lines: the job that
ran and the throughput table (console and Markdown). Presentation only."""

from __future__ import annotations

from gpudoctor.core.findings import Report
from gpudoctor.launch.threads import threads_line


def job_line(report: Report) -> str:
    c = report.data.get("config", {})
    line = (
        f"train-smoke: {c.get('nproc')} rank{'s' if c.get('nproc') != 1 else ''} × batch {c.get('batch_size')}, {c.get('backend')} on {c.get('device')}, "
        f"{c.get('steps')} steps, {c.get('model')}, {c.get('optimizer')}"
    )
    if c.get("amp"):
        line += ", AMP"
    if c.get("num_workers"):
        line += f", {c['num_workers']} DataLoader worker(s)"
    if report.data.get("joined_by"):
        line += f"; joined the {report.data['joined_by']} job"
    if c.get("checkpoint"):
        line += f"; checkpoint kept at {c['checkpoint']}"
    if threads := threads_line(report.data.get("threads")):
        line += f"\n{threads}"
    return line


def _rows(report: Report) -> list[list[str]]:
    tp = report.data.get("throughput") or {}
    rows = [
        [str(r["rank"]), str(r["steps"]), f"{r['seconds']:.3f}", f"{r['steps_per_s']:.1f}", f"{r['samples_per_s']:.0f}"]
        for r in tp.get("per_rank", [])
    ]
    total = tp.get("total")
    if total:
        rows.append(["total", str(total["steps"]), f"{total['seconds']:.3f}", f"{total['steps_per_s']:.1f}", f"{total['samples_per_s']:.0f}"])
    dp = tp.get("dp")
    if dp:
        rows.append([f"DataParallel ({dp['gpus']} GPUs)", str(dp["steps"]), f"{dp['seconds']:.3f}", f"{dp['steps_per_s']:.1f}", f"{dp['samples_per_s']:.0f}"])
    return rows


HEADERS = ["rank", "steps", "seconds", "steps/s", "samples/s"]


def console_extra(report: Report):
    from rich.table import Table
    from rich.text import Text

    if "config" not in report.data:  # no job ran (torch does not import, a launcher variable stopped it)
        return
    yield Text(job_line(report), style="bold")
    rows = _rows(report)
    if rows:
        table = Table(title="throughput of the timed training loop", title_justify="left")
        for h in HEADERS:
            table.add_column(h, justify="right" if h != "rank" else "left")
        for row in rows:
            table.add_row(*row, style="bold" if row[0] == "total" else None)
        yield table
    logs = report.data.get("logs")
    if logs:
        yield Text(f"rank logs kept in {logs}", style="dim")


def markdown_sections(report: Report):
    from gpudoctor.render.markdown import table

    if "config" not in report.data:  # no job ran
        return
    yield job_line(report)
    rows = _rows(report)
    if rows:
        yield "### Throughput\n\n" + table(HEADERS, rows)
