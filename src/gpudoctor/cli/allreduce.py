"""gpudoctor allreduce: can the ranks talk, do they get the right answer, and how fast."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import (
    JsonOpt,
    MarkdownOpt,
    StrictOpt,
    check_formats,
    emit,
    err,
    join_or_stop,
    waiting_notice,
    stop_if_ranks_lacked_torch,
    stop_if_torch_broken,
    usage_error,
    with_findings,
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
        bisect: bool = typer.Option(
            False, "--bisect", help="After the sweep, time a 1M all-reduce in every pair of ranks to name a slow rank, node or link."
        ),
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
    ) -> None:
        """Benchmark and verify a collective across ranks: busbw, latency, #wrong, by rank."""
        from gpudoctor.commands.allreduce.options import Options, PlanError, check_options, plan_sweep

        options = Options(nproc, backend, device, sizes, min_bytes, max_bytes, dtype, op, iters, warmup, timeout, bisect)
        check_formats(json_out, markdown)
        try:
            check_options(options)  # bad input fails fast, before torch is imported
        except PlanError as exc:
            usage_error(str(exc))

        decision = join_or_stop("allreduce", nproc is not None, json_out, markdown, strict)

        from gpudoctor.commands.allreduce.job import JobOutcome, run_joined, run_local
        from gpudoctor.launch.backend import ranks_competing_for_gpus
        from gpudoctor.probe.cuda import probe_cuda
        from gpudoctor.commands.allreduce.view import SweepDisplay
        from gpudoctor.launch.rank import join_context
        from gpudoctor.launch.capacity import crowded, usable_cores
        from gpudoctor.commands.allreduce.bandwidth import public_row
        from gpudoctor.commands.allreduce.table import heading, results_markdown, results_table

        ctx = join_context() if decision.join else None
        cuda = probe_cuda(quick=ctx is None)  # local ranks: they import torch, not this process
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
        if show:
            for line in sweep.rounding():  # to stderr: --json's stdout stays one object
                display.note(line)

        early = list(decision.findings)
        outcome: JobOutcome | None
        if ctx is None:
            early += filter(None, [crowded("allreduce", sweep.nproc, usable_cores())])
            with display:
                outcome = run_local(sweep, display.hooks())
        else:
            if ctx.rank == 0 and nproc is not None and nproc != ctx.world_size:
                display.note(f"--nproc {nproc} ignored: this is rank 0 of a {ctx.joined_by} job of {ctx.world_size}")
            if ctx.rank == 0:
                ctx.on_rendezvous_wait = waiting_notice("allreduce", display.note)
            try:
                with display:
                    outcome = run_joined(ctx, sweep, display.hooks() if show else None)
            except Exception as exc:  # a rank other than 0: it reports nothing, rank 0 does
                print(f"gpudoctor: rank {ctx.rank} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                raise typer.Exit(ExitCode.PROBLEM) from None
            if outcome is None:
                raise typer.Exit(ExitCode.OK)

        stop_if_ranks_lacked_torch("allreduce", cuda, outcome.report, json_out, markdown, strict)
        rows = [public_row(r) for r in outcome.rows]
        emit(
            with_findings(outcome.report, early),
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: [results_table(rows, title)] if rows else [],
            markdown_sections=lambda: [results_markdown(rows, title)] if rows else [],
        )
