"""gpudoctor train-smoke: a reference DDP training job that proves distributed
training works here, one verification per guarantee (docs/commands/train-smoke.md)."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path

import typer

from gpudoctor.core.exit_code import report_exit
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

DEFAULT_NPROC = 2


def checkpoint_target(save: str) -> str:
    """The file --save names (a directory gets train-smoke.pt inside); usage error if it cannot be written."""
    from gpudoctor.commands.train_smoke.config import CHECKPOINT_NAME

    from gpudoctor.core.user_file import FileRefused, check_writable

    path = Path(save).expanduser()
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    try:
        check_writable(str(path))
    except FileRefused as exc:
        usage_error(f"--save {save}: {exc.reason}")
    return str(path.resolve())


def _check_steps(steps: int | None, batch_size: int, world: int) -> int:
    """The steps to run: refuse a run too short for the learning verification to judge
    (smoke/config.py MIN_STEPS says what was measured), before any rank starts; without
    --steps, the default or the fewest this global batch needs."""
    from gpudoctor.commands.train_smoke.config import LEARNING_FACTOR, SmokeConfig

    needed = SmokeConfig(nproc=world, batch_size=batch_size).min_steps
    if steps is None:
        return max(SmokeConfig().steps, needed)
    if steps < needed:
        usage_error(
            f"--steps {steps} is too few to judge learning: with a global batch of {batch_size * world} "
            f"({batch_size} x {world} ranks) a healthy job needs {needed} steps to show its loss falling "
            f"{LEARNING_FACTOR:g}x with margin; use --steps {needed} or more"
            + (" (or a larger --batch-size)" if needed > SmokeConfig().min_steps else "")
        )
    return steps


def register(app: typer.Typer) -> None:
    @app.command("train-smoke")
    def train_smoke(
        nproc: int | None = typer.Option(
            None, "--nproc", help="Ranks to start on this machine, default 2 (ignored under torchrun)."
        ),
        backend: str = typer.Option("auto", "--backend", help="auto | nccl | gloo (auto: NCCL when each rank has its own GPU)."),
        device: str = typer.Option("auto", "--device", help="auto | cpu | cuda (auto: CUDA when available)."),
        steps: int | None = typer.Option(
            None, "--steps", min=1, help="Training steps per rank (default 200; at least 40, more for a global batch under 64)."
        ),
        batch_size: int = typer.Option(64, "--batch-size", min=1, help="Batch size per rank."),
        num_workers: int = typer.Option(0, "--num-workers", min=0, max=64, help="DataLoader workers per rank (spawn); >0 also measures their start-up."),
        amp: bool = typer.Option(False, "--amp", help="Train under autocast (fp16 + GradScaler on CUDA, bf16 on CPU)."),
        save: str | None = typer.Option(None, "--save", help="Keep rank 0's checkpoint at this path (default: a temporary file)."),
        timeout: float = typer.Option(120.0, "--timeout", min=1.0, help="Seconds before hung ranks are stopped and reported."),
        compare_dp: bool = typer.Option(False, "--compare-dp", help="Also run the job under nn.DataParallel (needs 2+ GPUs)."),
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
    ) -> None:
        """Run a small reference DDP job and verify sharding, learning, synchronisation,
        gradient averaging, checkpointing, DataLoader workers and throughput."""
        check_formats(json_out, markdown)
        from gpudoctor.launch.backend import BACKENDS, DEVICES, ImpossibleRequest, one_of
        from gpudoctor.launch.capacity import crowded, nproc_problem, usable_cores

        try:
            backend, device = one_of("--backend", backend, BACKENDS), one_of("--device", device, DEVICES)
        except ImpossibleRequest as exc:
            usage_error(str(exc))
        checkpoint = checkpoint_target(save) if save else ""
        if nproc is not None and (problem := nproc_problem(nproc)):
            usage_error(problem)
        decision = join_or_stop("train-smoke", nproc is not None, json_out, markdown, strict)
        nproc = DEFAULT_NPROC if nproc is None else nproc

        from gpudoctor.launch.rank import join_context
        from gpudoctor.commands.train_smoke.config import SmokeConfig
        from gpudoctor.launch.backend import choose_backend, ranks_competing_for_gpus
        from gpudoctor.probe.cuda import probe_cuda
        from gpudoctor.commands.train_smoke.job import run_joined, run_local
        from gpudoctor.commands.train_smoke.view import console_extra, markdown_sections

        ctx = join_context() if decision.join else None
        steps = _check_steps(steps, batch_size, ctx.world_size if ctx else nproc)
        facts = probe_cuda(quick=ctx is None)  # local ranks: they import torch, not this process
        stop_if_torch_broken("train-smoke", facts, json_out, markdown, strict)
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ranks_here = ranks_competing_for_gpus(ctx.local_world_size, facts, visible) if ctx else nproc
        try:
            backend, device = choose_backend(backend, device, ranks_here, facts)
        except ImpossibleRequest as exc:
            usage_error(str(exc))
        cfg = SmokeConfig(
            nproc=ctx.world_size if ctx else nproc,
            backend=backend,
            device=device,
            steps=steps,
            batch_size=batch_size,
            num_workers=num_workers,
            amp=amp,
            checkpoint_path=checkpoint,
            timeout_s=timeout,
            compare_dp=compare_dp,
        )
        if ctx is not None:
            if ctx.rank == 0:
                ctx.on_rendezvous_wait = waiting_notice("train-smoke")
            report = run_joined(ctx, cfg)
            if ctx.rank != 0:
                raise typer.Exit(report_exit(report, strict))  # rank 0 prints the job's report
        else:
            show = err.is_terminal and not json_out
            with err.status("train-smoke: starting ranks") if show else nullcontext() as status:

                def on_progress(rank: int, stage: str, step: int) -> None:
                    if status is not None and stage:
                        status.update(f"train-smoke: rank {rank} at {stage} {step if step > 0 else ''}")

                report = run_local(cfg, facts, on_progress=on_progress if show else None)
        early = [*decision.findings, *filter(None, [crowded("train-smoke", nproc, usable_cores()) if ctx is None else None])]
        stop_if_ranks_lacked_torch("train-smoke", facts, report, json_out, markdown, strict)
        report = with_findings(report, early)
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: console_extra(report),
            markdown_sections=lambda: markdown_sections(report),
        )

