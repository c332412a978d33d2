"""gpudoctor allreduce: can the ranks talk, do they get the right answer, and how fast."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from gpudoctor.cli.output import (
    JsonOpt,
    MarkdownOpt,
    StrictOpt,
    check_formats,
    emit,
    err,
    stop_if_torch_broken,
    usage_error,
)


def register(app: typer.Typer) -> None:
    @app.command("allreduce")
    def allreduce(
        nproc: Optional[int] = typer.Option(
            None, "--nproc", metavar="N", help="Ranks to start on this machine (default: one per GPU, else 2)."
        ),
        backend: str = typer.Option("auto", "--backend", metavar="auto|nccl|gloo", help="auto: NCCL when every rank has a GPU, else gloo."),
        device: str = typer.Option("auto", "--device", metavar="auto|cpu|cuda", help="Where the tensors live."),
        sizes: Optional[str] = typer.Option(None, "--sizes", metavar="LIST", help="Sizes in bytes, e.g. 4K,1M,64M (default: 4K to 64M in steps of x4)."),
        min_bytes: Optional[str] = typer.Option(None, "--min-bytes", metavar="SIZE", help="Sweep from SIZE, doubling (with --max-bytes)."),
        max_bytes: Optional[str] = typer.Option(None, "--max-bytes", metavar="SIZE", help="Sweep up to SIZE."),
        dtype: str = typer.Option("float32", "--dtype", metavar="DTYPE", help="float32, float16 or bfloat16."),
        op: str = typer.Option("all_reduce", "--op", metavar="OP", help="all_reduce, all_gather, reduce_scatter or broadcast."),
        iters: int = typer.Option(20, "--iters", metavar="K", help="Timed iterations per size (the median is shown)."),
        warmup: int = typer.Option(5, "--warmup", metavar="W", help="Untimed iterations per size first."),
        timeout: float = typer.Option(300.0, "--timeout", metavar="S", help="Watchdog: stop every rank after S seconds."),
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
    ) -> None:
        """Benchmark and verify a collective across ranks: busbw, latency, #wrong, by rank."""
        from gpudoctor.allreduce_plan import Options, PlanError, check_options, plan_sweep

        options = Options(nproc, backend, device, sizes, min_bytes, max_bytes, dtype, op, iters, warmup, timeout)
        check_formats(json_out, markdown)
        try:
            check_options(options)  # bad input fails fast, before torch is imported
        except PlanError as exc:
            usage_error(str(exc))

        from gpudoctor.allreduce_job import run_joined, run_local
        from gpudoctor.backend_choice import probe_cuda, ranks_competing_for_gpus
        from gpudoctor.cli.allreduce_display import SweepDisplay
        from gpudoctor.launch import join_context
        from gpudoctor.render.allreduce_table import heading, results_markdown, results_table

        ctx = join_context()
        cuda = probe_cuda()
        stop_if_torch_broken("allreduce", cuda, json_out, markdown, strict)
        try:
            if ctx is None:
                sweep = plan_sweep(options, cuda)
            else:
                here = ranks_competing_for_gpus(ctx.local_world_size, cuda, os.environ.get("CUDA_VISIBLE_DEVICES"))
                sweep = plan_sweep(options, cuda, world=ctx.world_size, ranks_per_host=here)
        except PlanError as exc:
            usage_error(str(exc))
        title = heading(sweep.op, sweep.nproc, sweep.backend, sweep.device, sweep.iters)
        show = ctx is None or ctx.rank == 0
        display = SweepDisplay(err, len(sweep.planned()), title, live=show)

        if ctx is None:
            with display:
                outcome = run_local(sweep, display.hooks())
        else:
            if ctx.rank == 0 and nproc is not None and nproc != ctx.world_size:
                display.note(f"--nproc {nproc} ignored: this is rank 0 of a {ctx.joined_by} job of {ctx.world_size}")
            try:
                with display:
                    outcome = run_joined(ctx, sweep, display.hooks() if show else None)
            except Exception as exc:  # a rank other than 0: it reports nothing, rank 0 does
                print(f"gpudoctor: rank {ctx.rank} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                raise typer.Exit(1) from None
            if outcome is None:
                raise typer.Exit(0)

        rows = list(outcome.rows)
        emit(
            outcome.report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: [results_table(rows, title)] if rows else [],
            markdown_sections=lambda: [results_markdown(rows, title)] if rows else [],
        )
