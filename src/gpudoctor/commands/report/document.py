"""StepResults -> one Markdown document: a summary table, then one collapsible
<details> section per step (its facts, figures and findings, as `--markdown`
renders them), problems open by default. GitHub, GitLab and most trackers
render <details> in issues."""

from __future__ import annotations

import datetime
import platform
import sys
from collections.abc import Sequence

from gpudoctor.core.version import __version__
from gpudoctor.core.findings import Severity
from gpudoctor.commands.report.steps import StepResult


def status(result: StepResult) -> str:
    if result.report is None:
        return "❌ did not finish"
    if result.report.ok:
        warns = result.report.counts()["warn"]
        return "✅ healthy" + (f" ({warns} warning{'s' if warns != 1 else ''})" if warns else "")
    return "❌ problems found"


def demote_headings(markdown: str) -> str:
    """One heading level down (the step's "## gpudoctor check" sits under the
    document's "#"), leaving fenced code alone: a fix may start with "# "."""
    out, fenced = [], False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def _section(result: StepResult) -> str:
    from gpudoctor.commands import markdown

    if result.report is not None:
        body = demote_headings(markdown(result.report))
    else:
        body = f"The step did not finish: **{result.error}**. The other steps still ran.\n"
        if result.trace:
            body += f"\n```\n{result.trace.rstrip()}\n```\n"
        body += f"\nRun it alone to see more: `{result.command}`\n"
    quiet = result.report is not None and result.report.worst().rank < Severity.WARN.rank
    opened = "" if quiet else " open"  # what needs a look is unfolded
    summary = f"<b>{result.name}</b>: {status(result)} ({result.seconds:.1f} s)"
    return f"<details{opened}>\n<summary>{summary}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def document(
    results: Sequence[StepResult], now: datetime.datetime | None = None, skipped: Sequence[str] = ()
) -> str:
    """`skipped`: the steps left out with --skip, said in the summary line."""
    when = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# gpudoctor report",
        "",
        f"gpudoctor {__version__} · Python {sys.version.split()[0]} · {platform.platform()} · {when}",
        "",
        "| step | result | time | same as |",
        "|---|---|---|---|",
    ]
    out += [f"| {r.name} | {status(r)} | {r.seconds:.1f} s | `{r.command}` |" for r in results]
    problems = [f for r in results if r.report for f in r.report.findings if f.severity.rank >= Severity.WARN.rank]
    out += ["", _problem_line(results, problems, skipped), ""]
    out += [_section(r) for r in results]
    return "\n".join(out)


def _problem_line(results: Sequence[StepResult], problems: list, skipped: Sequence[str] = ()) -> str:
    unfinished = [r.name for r in results if r.report is None]
    parts = []
    if problems:
        ids = ", ".join(dict.fromkeys(f"`{f.id}`" for f in problems))
        parts.append(f"Findings to look at: {ids}.")
    if unfinished:
        parts.append(f"Did not finish: {', '.join(unfinished)}.")
    left_out = f"skipped: {', '.join(skipped)} (--skip)" if skipped else ""
    if not parts:
        # "Every step healthy" over a report without train-smoke would claim what was not run.
        return f"Every step that ran is healthy; {left_out}." if skipped else "Every step healthy."
    return " ".join(parts) + (f" {left_out[0].upper()}{left_out[1:]}." if skipped else "")
