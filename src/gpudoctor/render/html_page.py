"""`--html FILE`: one self-contained HTML page of a report, to open in any browser
without a network: the charts are inline SVG (render/html_charts.py, matplotlib from
the optional `gpudoctor[html]` extra), the style is inline, there is no script, and a
Content-Security-Policy forbids the page to load anything at all.

What it shows, where the report holds it: the bus-bandwidth curve against the published
figure for the hardware (`allreduce`), the `--bisect` pair matrix as a heat map, the
per-rank phases of the average step (`run --nproc`), and the findings. Every piece of
text from a report is escaped (render/escape.html_text): a finding can quote a log line
or a file name that someone else wrote.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.core.version import __version__
from gpudoctor.render.escape import html_text as esc
from gpudoctor.render.finding_text import format_value

# The one line a user sees when the extra is not installed (exit 2, no file written).
EXTRA_LINE = "--html needs matplotlib, which gpudoctor's html extra installs: pip install 'gpudoctor[html]'"
# Nothing from anywhere: no script, no fetch; only the inline style and inline SVG.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; } .meta { color: #666; }
section { border-top: 1px solid #ccc; margin-top: 2em; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 0.3em 0.5em; vertical-align: top; border-bottom: 1px solid #eee; }
.ok { color: #1a7f37; } .info { color: #0969da; } .warn { color: #9a6700; } .error { color: #cf222e; }
.note { background: #f6f8fa; padding: 0.5em 0.8em; border-left: 3px solid #ccc; }
pre { background: #f6f8fa; padding: 0.5em; white-space: pre-wrap; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; } dt { font-weight: bold; } dd { margin: 0; }
"""
ICONS = {Severity.OK: "✔", Severity.INFO: "ℹ", Severity.WARN: "⚠", Severity.ERROR: "✖"}


@dataclass(frozen=True)
class Part:
    """One section of the page: a command's report, or why there is none."""

    heading: str
    report: Report | None = None
    missing: str = ""  # why there is no report (a `gpudoctor report` step that did not finish)


def missing_extra() -> str:
    """EXTRA_LINE when matplotlib cannot be imported, else ""."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return EXTRA_LINE
    return ""


def html_problem(path: str) -> str:
    """Why `--html PATH` cannot be written, in one line ("" when it can): asked before
    any work starts, as each command does for its other output files."""
    from gpudoctor.core.user_file import FileRefused, check_writable

    if line := missing_extra():
        return line
    try:
        check_writable(path)
    except FileRefused as exc:
        return f"--html {exc}"
    return ""


def page(parts: Sequence[Part], title: str, *, strict: bool = False, now: datetime.datetime | None = None) -> str:
    when = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">gpudoctor {esc(__version__)} · {esc(platform.node())} · {esc(platform.platform())} · {when}</p>',
    ]
    for part in parts:
        out += _part(part, strict)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _part(part: Part, strict: bool) -> list[str]:
    report = part.report
    if report is None:
        return ["<section>", f"<h2>{esc(part.heading)}: did not finish</h2>", f'<p class="error">{esc(part.missing)}</p>', "</section>"]
    status, css = ("problems found", "error") if report.failed(strict) else ("healthy", "ok")
    out = ["<section>", f'<h2>{esc(part.heading)}: <span class="{css}">{status}</span></h2>']
    data = report.data
    if data.get("results"):
        out += _bandwidth(report)
    if data.get("bisect"):
        out += _pairs(report)
    if isinstance(data.get("steps"), dict):
        out += _steps(data["steps"])
    out += _findings(report.findings)
    out.append("</section>")
    return out


def _evidence_of(report: Report, key: str) -> tuple[Finding, object] | None:
    for f in report.findings:
        if key in f.evidence:
            return f, f.evidence[key]
    return None


def _bandwidth(report: Report) -> list[str]:
    from gpudoctor.render.html_charts import busbw_svg

    data = report.data
    published = _evidence_of(report, "published busbw GB/s")
    out = ["<h3>Bus bandwidth by message size</h3>"]
    if published is not None:
        finding, gbps = published
        ev = finding.evidence
        label = f"published: {gbps:g} GB/s"
        out.append(busbw_svg(data["results"], float(gbps) if isinstance(gbps, (int, float)) else None, label))
        note = (
            f"Published figure: {format_value(ev.get('published run', ''))} ({format_value(ev.get('conditions', ''))}; "
            f"source {format_value(ev.get('source', ''))}). This run reached {format_value(ev.get('busbw compared (GB/s)', '?'))} GB/s "
            f"the way the published figure is computed ({format_value(ev.get('statistic', ''))}), "
            f"{100 * float(ev.get('share of published') or 0):.0f} % of it; the curve is the table's median busbw."
        )
    else:
        out.append(busbw_svg(data["results"], None))
        said = _evidence_of(report, "published busbw")
        if said is not None:
            note = f"No published figure to compare with: {format_value(said[1])}."
        elif data.get("device") == "cpu" or data.get("backend") == "gloo":
            note = (
                f"No published figure to compare with: this run is {data.get('backend', '?')} on {data.get('device', '?')}; "
                "the published figures gpudoctor holds are NCCL runs on GPUs (docs/commands/allreduce.md, "
                "“Against a published figure”)."
            )
        else:
            note = "No published figure to compare with for this run."
    out.append(f'<p class="note">{esc(note)}</p>')
    return out


def _pairs(report: Report) -> list[str]:
    from gpudoctor.render.html_charts import pairs_svg

    data = report.data
    pairs = data["bisect"]
    nproc = int(data.get("nproc") or 1 + max(max(p["ranks"]) for p in pairs))
    verdict = _evidence_of(report, "pairs")
    size = verdict[0].evidence.get("bytes") if verdict else None
    out = ["<h3>Pairs of ranks (<code>--bisect</code>)</h3>", pairs_svg(pairs, nproc, size if isinstance(size, int) else None)]
    text = "Each cell: one all-reduce between the two ranks, the faster of two passes."
    if verdict is not None:
        text += f" Verdict: {verdict[0].title}"
    out.append(f'<p class="note">{esc(text)}</p>')
    return out


def _steps(steps: dict) -> list[str]:
    from gpudoctor.render.html_charts import phases_svg

    out = ["<h3>Where each rank’s step goes</h3>"]
    if not steps.get("ranks"):
        return out + ['<p class="note">No step was seen: the script ran no training step the step clock knows (docs/commands/run.md).</p>']
    out.append(phases_svg(steps))
    slowest = steps.get("slowest")
    text = f"The average step of each rank, phase by phase; {steps.get('steps_per_s', '?')} steps/s over {steps.get('steps_compared', '?')} steps compared."
    if slowest:
        text += f" Slowest: rank {slowest.get('rank')}, {slowest.get('late_ms')} ms late per step, in {slowest.get('phase')}."
    out.append(f'<p class="note">{esc(text)}</p>')
    return out


def _findings(findings: Sequence[Finding]) -> list[str]:
    out = ["<h3>Findings</h3>", "<table><tr><th></th><th>id</th><th>finding</th></tr>"]
    for f in findings:
        css = f.severity.value
        out.append(f'<tr><td class="{css}">{ICONS[f.severity]}</td><td><code>{esc(f.id)}</code></td><td>{esc(f.title)}</td></tr>')
    out.append("</table>")
    for f in findings:
        if f.severity.rank < Severity.WARN.rank:
            continue
        out.append(f'<h4 class="{f.severity.value}">{ICONS[f.severity]} <code>{esc(f.id)}</code>: {esc(f.title)}</h4>')
        if f.evidence:
            out.append("<dl>" + "".join(f"<dt>{esc(str(k))}</dt><dd>{esc(format_value(v))}</dd>" for k, v in f.evidence.items()) + "</dl>")
        if f.why:
            out.append(f"<p>Why: {esc(f.why)}</p>")
        if f.fix:
            out.append(f"<p>Fix:</p><pre>{esc(f.fix)}</pre>")
    return out


def write_page(path: str, parts: Sequence[Part], title: str, *, strict: bool = False) -> str:
    """Draw the page and write it where the user asked (core/user_file: a new file is
    private to the user, 0600); "" when written, else the one line saying why not."""
    from gpudoctor.core.user_file import output_error, write_output

    try:
        write_output(path, page(parts, title, strict=strict))
    except OSError as exc:
        return f"gpudoctor: could not write the HTML report: {output_error(path, exc)}"
    return ""
