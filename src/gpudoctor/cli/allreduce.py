"""gpudoctor allreduce: can the ranks talk, do they get the right answer, and how fast."""

from __future__ import annotations

from typing import NoReturn, Optional

import typer

from gpudoctor.commands.allreduce.options import DEFAULT_CPU_NPROC, Options
from gpudoctor.cli.output import (
    Heartbeat,
    FaultOpt,
    HtmlOpt,
    JsonOpt,
    MarkdownOpt,
    StrictOpt,
    check_formats,
    emit,
    err,
    exit_if_quiet,
    html_written,
    usage_error,
    waiting_notice,
)


def register(app: typer.Typer) -> None:
    @app.command("allreduce")
    def allreduce(
        nproc: Optional[int] = typer.Option(
            Options.nproc, "--nproc", metavar="N", help=f"Ranks to start on this machine (default: one per GPU, else {DEFAULT_CPU_NPROC})."
        ),
        backend: str = typer.Option(Options.backend, "--backend", metavar="auto|nccl|gloo", help="auto: NCCL when every rank has a GPU, else gloo."),
        device: str = typer.Option(Options.device, "--device", metavar="auto|cpu|cuda", help="Where the tensors live."),
        sizes: Optional[str] = typer.Option(Options.sizes, "--sizes", metavar="LIST", help="Sizes in bytes, e.g. 4K,1M,64M (default: 4K to 64M in steps of x4)."),
        min_bytes: Optional[str] = typer.Option(Options.min_bytes, "--min-bytes", metavar="SIZE", help="Sweep from SIZE, doubling (with --max-bytes)."),
        max_bytes: Optional[str] = typer.Option(Options.max_bytes, "--max-bytes", metavar="SIZE", help="Sweep up to SIZE."),
        dtype: str = typer.Option(Options.dtype, "--dtype", metavar="DTYPE", help="float32, float16 or bfloat16."),
        op: str = typer.Option(Options.op, "--op", metavar="OP", help="all_reduce, all_gather, reduce_scatter or broadcast."),
        iters: int = typer.Option(Options.iters, "--iters", metavar="K", help="Timed iterations per size (the median is shown)."),
        warmup: int = typer.Option(Options.warmup, "--warmup", metavar="W", help="Untimed iterations per size first."),
        timeout: float = typer.Option(Options.timeout, "--timeout", metavar="S", help="Watchdog: stop every rank after S seconds."),
        bisect: bool = typer.Option(
            Options.bisect, "--bisect", help="After the sweep, time a 1M all-reduce in every pair of ranks to name a slow rank, node or link."
        ),
        fault: Optional[str] = FaultOpt,
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        csv_out: bool = typer.Option(
            False, "--csv", help="Print the results as CSV on stdout (one line per size), the verdict on stderr."
        ),
        strict: bool = StrictOpt,
        html: Optional[str] = HtmlOpt,
    ) -> None:
        """Benchmark and verify a collective across ranks: busbw, latency, #wrong, by rank."""
        from gpudoctor.commands.allreduce import run
        from gpudoctor.commands.allreduce.options import Options
        from gpudoctor.commands.allreduce.table import (
            average_line,
            node_markdown,
            node_table,
            report_heading,
            results_markdown,
            results_table,
        )
        from gpudoctor.core.usage import UsageError
        from gpudoctor.launch.threads import threads_line
        from gpudoctor.render.html_page import html_problem

        check_formats(json_out, markdown)
        if csv_out and (json_out or markdown):
            usage_error("choose one of --json, --markdown and --csv")
        if html and (problem := html_problem(html)):
            usage_error(problem)  # before the sweep, not after it
        options = Options(
            nproc=nproc, backend=backend, device=device, sizes=sizes, min_bytes=min_bytes, max_bytes=max_bytes, dtype=dtype,
            op=op, iters=iters, warmup=warmup, timeout=timeout, bisect=bisect, fault=fault,
        )
        try:
            with Heartbeat("allreduce") as beat:
                report = run(options, progress=lambda sweep, shown: _display(sweep, shown, beat))
        except UsageError as exc:
            usage_error(str(exc))
        exit_if_quiet(report, strict)
        with html_written(html, "gpudoctor allreduce", report, strict):  # the page first: emit leaves
            rows = report.data.get("results") or []
            threads = threads_line(report.data.get("threads"))
            summary = report.data.get("summary") or {}
            per_node = report.data.get("per_node")  # across nodes only
            if csv_out:
                _emit_csv(report, rows, summary, strict, per_node)
            average = average_line(summary)
            emit(
                report,
                json_out=json_out,
                markdown=markdown,
                strict=strict,
                rich_extra=lambda: [
                    *([results_table(rows, report_heading(report)), *_lines(average)] if rows else []),
                    *([node_table(per_node)] if per_node else []),
                    *([threads] if threads else []),
                ],
                markdown_sections=lambda: [
                    *([results_markdown(rows, report_heading(report), summary)] if rows else []),
                    *([node_markdown(per_node)] if per_node else []),
                    *([threads] if threads else []),
                ],
            )


def _lines(text: str) -> list:
    from rich.text import Text

    return [Text(text), Text("")] if text else []


def _emit_csv(report, rows: list, summary: dict, strict: bool, per_node: dict | None = None) -> NoReturn:
    """CSV on stdout; the findings' verdict line and the problems on stderr, then the exit code."""
    import sys

    from gpudoctor.commands.allreduce.table import results_csv
    from gpudoctor.core.exit_code import report_exit
    from gpudoctor.core.findings import Severity
    from gpudoctor.render.console import verdict
    from gpudoctor.render.escape import terminal

    sys.stdout.write(results_csv(rows, summary, per_node))
    for f in report.findings:
        if f.severity in (Severity.WARN, Severity.ERROR):
            err.print(terminal(f"{f.severity.value}: {f.title}  [{f.id}]", one_line=True), markup=False, highlight=False)
    err.print(verdict(report, strict))
    raise typer.Exit(report_exit(report, strict))


def _display(sweep, shown: bool, beat: Heartbeat):
    """The live results table and progress bar on stderr (the run feeds it); a
    joined rank 0 also says there while it waits for its peers; in a log, the
    heartbeat line says how many sizes are done."""
    from gpudoctor.commands.allreduce.table import heading
    from gpudoctor.commands.allreduce.view import SweepDisplay

    title = heading(sweep.op, sweep.nproc, sweep.backend, sweep.device, sweep.iters)
    total = len(sweep.planned())
    display = SweepDisplay(err, total, title, live=shown)
    display.on_wait = waiting_notice("allreduce", display.note)
    beat.status = lambda: f"{len(display.rows)} of {total} sizes done"
    return display
