"""The commands, one package each (check, allreduce, train_smoke, lint, diagnose, run,
report); each has its door, `run(options)`, which the CLI and the Python API both call.

Here, above every command, what shows any command's Report beyond its findings (the
facts of `check`, the results of `allreduce`, the throughput of `train-smoke`),
rebuilt from the Report alone: whatever holds only a Report (a notebook,
`gpudoctor report`) shows what `--markdown` shows. It reaches into each command's
own view, so it cannot live in render/ nor in one command's package.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudoctor.core.findings import Report


def _check(report: Report) -> list[str]:
    from gpudoctor.commands.check.view import markdown_sections
    from gpudoctor.probe.facts import Facts

    return list(markdown_sections(Facts.from_dict(report.data["facts"])))


def _allreduce(report: Report) -> list[str]:
    from gpudoctor.commands.allreduce.table import heading, results_markdown

    data, rows = report.data, report.data.get("results") or []
    if not rows:
        return []
    summary = data["summary"]
    return [results_markdown(rows, heading(summary["op"], data["nproc"], data["backend"], data["device"], summary["iters"]), summary)]


def _diagnose(report: Report) -> list[str]:
    from gpudoctor.commands.diagnose.view import markdown_sections

    return list(markdown_sections(report))


def _train_smoke(report: Report) -> list[str]:
    from gpudoctor.commands.train_smoke.view import markdown_sections

    return list(markdown_sections(report))


BY_COMMAND: dict[str, Callable[[Report], list[str]]] = {
    "check": _check, "allreduce": _allreduce, "train-smoke": _train_smoke, "diagnose": _diagnose,
}  # fmt: skip


def markdown_sections(report: Report) -> list[str]:
    """The command's own sections, rebuilt from the Report alone."""
    build = BY_COMMAND.get(report.command)
    if build is None:
        return []
    try:
        return build(report)
    except Exception as exc:  # noqa: BLE001 - showing the findings matters more than the extras
        return [f"(gpudoctor could not render the {report.command} details: {type(exc).__name__}: {exc})"]


def markdown(report: Report) -> str:
    """The report as its command's `--markdown` prints it."""
    from gpudoctor.render.markdown import report_markdown

    return report_markdown(report, markdown_sections(report))
