"""gpudoctor train-smoke: a reference DDP training job that proves distributed
training works here, one verification per guarantee (docs/commands/train-smoke.md)."""

from __future__ import annotations

import os
import tempfile
from contextlib import nullcontext
from pathlib import Path

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

def checkpoint_target(save: str) -> str:
    """The file --save names (a directory gets train-smoke.pt inside); usage error if it cannot be written."""
    from gpudoctor.smoke.config import CHECKPOINT_NAME

    path = Path(save).expanduser()
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    parent = path.parent
    if not parent.exists():
        usage_error(f"--save {save}: directory {parent} does not exist")
    if not parent.is_dir():
        usage_error(f"--save {save}: {parent} is not a directory")
    try:
        if path.exists():
            with open(path, "ab"):
                pass
        else:
            # os.access says yes to root even where nothing can be created (/proc, read-only
            # mounts): try the real thing, next to the target.
            with tempfile.NamedTemporaryFile(dir=parent, prefix=".gpudoctor-probe-"):
                pass
    except OSError as exc:
        usage_error(f"--save {save}: cannot create a file in {parent} ({exc.strerror or exc})")
    return str(path.resolve())


def register(app: typer.Typer) -> None:
    @app.command("train-smoke")
    def train_smoke(
        nproc: int = typer.Option(2, "--nproc", min=1, max=256, help="Ranks to start on this machine (ignored under torchrun)."),
        backend: str = typer.Option("auto", "--backend", help="auto | nccl | gloo (auto: NCCL when each rank has its own GPU)."),
        device: str = typer.Option("auto", "--device", help="auto | cpu | cuda (auto: CUDA when available)."),
        steps: int = typer.Option(200, "--steps", min=1, help="Training steps per rank."),
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
        from gpudoctor.backend_choice import BACKENDS, DEVICES, ImpossibleRequest, one_of

        try:
            backend, device = one_of("--backend", backend, BACKENDS), one_of("--device", device, DEVICES)
        except ImpossibleRequest as exc:
            usage_error(str(exc))
        checkpoint = checkpoint_target(save) if save else ""

        from gpudoctor.launch import join_context
        from gpudoctor.smoke.config import SmokeConfig
        from gpudoctor.backend_choice import choose_backend, probe_cuda, ranks_competing_for_gpus
        from gpudoctor.smoke.runner import run_joined, run_local
        from gpudoctor.smoke.view import console_extra, markdown_sections

        ctx = join_context()
        facts = probe_cuda()
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
            report = run_joined(ctx, cfg)
            if ctx.rank != 0:
                raise typer.Exit(report.exit_code(strict))  # rank 0 prints the job's report
        else:
            show = err.is_terminal and not json_out
            with err.status("train-smoke: starting ranks") if show else nullcontext() as status:

                def on_progress(rank: int, stage: str, step: int) -> None:
                    if status is not None and stage:
                        status.update(f"train-smoke: rank {rank} at {stage} {step if step > 0 else ''}")

                report = run_local(cfg, facts, on_progress=on_progress if show else None)
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: console_extra(report),
            markdown_sections=lambda: markdown_sections(report),
        )

