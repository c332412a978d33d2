"""gpudoctor train-smoke: a reference DDP training job that proves distributed
training works here, one verification per guarantee (docs/commands/train-smoke.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer

from gpudoctor.commands.train_smoke.config import MIN_STEPS, REFERENCE_BATCH, SmokeConfig
from gpudoctor.commands.train_smoke.rank import STAGE_TRAIN
from gpudoctor.commands.train_smoke.options import DEFAULT_NPROC, MAX_WORKERS, MIN_TIMEOUT_S, Options
from gpudoctor.cli.output import (
    Heartbeat,
    FaultOpt,
    JsonOpt,
    MarkdownOpt,
    StrictOpt,
    check_formats,
    emit,
    err,
    exit_if_quiet,
    usage_error,
    waiting_notice,
)


def register(app: typer.Typer) -> None:
    @app.command("train-smoke")
    def train_smoke(
        nproc: int | None = typer.Option(
            Options.nproc, "--nproc", help=f"Ranks to start on this machine, default {DEFAULT_NPROC} (ignored under torchrun)."
        ),
        backend: str = typer.Option(Options.backend, "--backend", help="auto | nccl | gloo (auto: NCCL when each rank has its own GPU)."),
        device: str = typer.Option(Options.device, "--device", help="auto | cpu | cuda (auto: CUDA when available)."),
        steps: int | None = typer.Option(
            Options.steps, "--steps",
            help=f"Training steps per rank (default {SmokeConfig.steps}; at least {MIN_STEPS}, more for a global batch under {REFERENCE_BATCH}).",
        ),
        batch_size: int = typer.Option(Options.batch_size, "--batch-size", help="Batch size per rank."),
        num_workers: int = typer.Option(
            Options.num_workers, "--num-workers",
            help=f"DataLoader workers per rank, 0 to {MAX_WORKERS} (spawn); >0 also measures their start-up.",
        ),
        amp: bool = typer.Option(Options.amp, "--amp", help="Train under autocast (fp16 + GradScaler on CUDA, bf16 on CPU)."),
        save: str | None = typer.Option(Options.save, "--save", help="Keep rank 0's checkpoint at this path (default: a temporary file)."),
        timeout: float = typer.Option(
            Options.timeout, "--timeout", help=f"Seconds (at least {MIN_TIMEOUT_S:g}) before hung ranks are stopped and reported."
        ),
        compare_dp: bool = typer.Option(Options.compare_dp, "--compare-dp", help="Also run the job under nn.DataParallel (needs 2+ GPUs)."),
        fault: str | None = FaultOpt,
        json_out: bool = JsonOpt,
        markdown: bool = MarkdownOpt,
        strict: bool = StrictOpt,
    ) -> None:
        """Run a small reference DDP job and verify sharding, learning, synchronisation,
        gradient averaging, checkpointing, DataLoader workers and throughput."""
        check_formats(json_out, markdown)
        from gpudoctor.commands.train_smoke import run
        from gpudoctor.commands.train_smoke.view import console_extra, markdown_sections
        from gpudoctor.core.usage import UsageError

        options = Options(
            nproc=nproc, backend=backend, device=device, steps=steps, batch_size=batch_size, num_workers=num_workers,
            amp=amp, save=save, timeout=timeout, compare_dp=compare_dp, fault=fault,
        )
        try:
            with Heartbeat("train-smoke") as beat:
                report = run(options, progress=_Status(err.is_terminal and not json_out, beat))
        except UsageError as exc:
            usage_error(str(exc))
        exit_if_quiet(report, strict)
        emit(
            report,
            json_out=json_out,
            markdown=markdown,
            strict=strict,
            rich_extra=lambda: console_extra(report),
            markdown_sections=lambda: markdown_sections(report),
        )


def stage_words(rank: int, stage: str, step: int) -> str:
    """"rank 0 at train, step 40", "rank 1 finished": a rank's progress counter is a
    step only while it trains (the stages after it count on past the last step)."""
    if stage == "finished":
        return f"rank {rank} finished"
    return f"rank {rank} at {stage}" + (f", step {step}" if stage == STAGE_TRAIN and step > 0 else "")


class _Status:
    """A status line on stderr while local ranks run (on a terminal, without --json);
    a joined rank 0 says there when it waits for its peers."""

    def __init__(self, show: bool, beat: Heartbeat | None = None):
        self.show = show
        self.beat = beat
        self.waiting = waiting_notice("train-smoke")

    @contextmanager
    def running(self) -> Iterator[Callable[[int, str, int], None] | None]:
        if not self.show:
            if self.beat is None or not self.beat.active:
                yield None
                return
            at = [""]
            self.beat.status = lambda: at[0]

            def on_stage(rank: int, stage: str, step: int) -> None:
                if stage:
                    at[0] = stage_words(rank, stage, step)

            yield on_stage
            return
        with err.status("train-smoke: starting ranks") as status:

            def on_progress(rank: int, stage: str, step: int) -> None:
                if stage:
                    status.update(f"train-smoke: {stage_words(rank, stage, step)}")

            yield on_progress
