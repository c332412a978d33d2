"""`gpudoctor train-smoke`: a reference DDP training job and the checks of the
guarantees it must keep.

    options.py    the command's options and their one check (the CLI's and the API's)
    config.py     the job's settings and the thresholds each verification states
    rank.py       what one rank does (torch; runs inside the ranks)
    workers.py    DataLoader worker start-up, persistent_workers off vs on (torch)
    dp.py         the same job under nn.DataParallel, for --compare-dp (torch)
    verify.py     pure: the ranks' gathered results -> verifications and findings
    job.py        launch the ranks (or join torchrun's), verify, build the Report
    view.py       the throughput table for the console and Markdown reports

`run` below is the command's one door: the CLI (cli/train_smoke.py) and the
Python API (api.train_smoke) both call it, and nothing else orchestrates the job.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gpudoctor.commands.train_smoke.options import Options
    from gpudoctor.core.findings import Report

COMMAND = "train-smoke"


class Progress(Protocol):
    """What the caller shows while the job runs (the CLI: a status line on a terminal)."""

    def running(self) -> AbstractContextManager[Callable[[int, str, int], None] | None]:
        """Local ranks run inside it; it gives their heartbeat callback (rank, stage, step), or None."""
        ...

    def waiting(self, wait: Any) -> None:
        """A joined rank 0 is still waiting for its peers (launch/rendezvous's wait)."""
        ...


def run(options: "Options", *, progress: Progress | None = None) -> "Report":
    """Check the options, decide between local ranks and joining a torchrun/SLURM job,
    choose the backend, run the job and return its verified Report (early findings
    first). Bad input raises UsageError before any rank starts. A joined rank other
    than 0 returns a QuietReport: rank 0 reports for the job."""
    import os
    from contextlib import nullcontext
    from dataclasses import replace

    from gpudoctor.commands.train_smoke.config import SmokeConfig
    from gpudoctor.commands.train_smoke.job import run_joined, run_local
    from gpudoctor.commands.train_smoke.options import check_options
    from gpudoctor.core.findings import Report
    from gpudoctor.core.quiet import QuietReport
    from gpudoctor.launch.backend import choose_backend, ranks_competing_for_gpus
    from gpudoctor.launch.capacity import crowded, usable_cores
    from gpudoctor.launch.join_env import read_join_env
    from gpudoctor.launch.launcher_watch import watch_launcher
    from gpudoctor.hang.failures import fault_findings
    from gpudoctor.launch.rank import adopt_fault, join_context
    from gpudoctor.launch.torch_missing import ranks_lacked_torch, torch_broken
    from gpudoctor.probe.cuda import probe_cuda

    faults = fault_findings(options.fault, adopt_fault(options.fault))
    decision = read_join_env(COMMAND, options.nproc is not None)
    ctx = join_context() if decision.join else None
    watch_launcher(ctx)  # a rank whose torchrun agent is killed stops and says so
    o = check_options(options, ctx.world_size if ctx else None)  # the steps a job needs depend on its ranks
    if decision.blocked:
        return Report(COMMAND, decision.findings)
    assert o.nproc is not None and o.steps is not None  # filled in by check_options
    facts = probe_cuda(quick=ctx is None)  # local ranks: they import torch, not this process
    if (broken := torch_broken(COMMAND, facts)) is not None:
        return broken
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ranks_here = ranks_competing_for_gpus(ctx.local_world_size, facts, visible) if ctx else o.nproc
    backend, device = choose_backend(o.backend, o.device, ranks_here, facts)  # ImpossibleRequest: a UsageError
    cfg = SmokeConfig(
        nproc=ctx.world_size if ctx else o.nproc,
        backend=backend,
        device=device,
        steps=o.steps,
        batch_size=o.batch_size,
        num_workers=o.num_workers,
        amp=o.amp,
        checkpoint_path=o.save or "",
        timeout_s=float(o.timeout),
        compare_dp=o.compare_dp,
    )
    if ctx is not None:
        if ctx.rank == 0 and progress is not None:
            ctx.on_rendezvous_wait = progress.waiting
        report = run_joined(ctx, cfg)
        if ctx.rank != 0:  # rank 0 reports for the job; this rank's findings give its exit code
            return QuietReport(report.command, report.findings, report.data, report.interrupted, report.stop_signal)
    else:
        with progress.running() if progress is not None else nullcontext() as on_stage:
            report = run_local(cfg, facts, on_progress=on_stage)
    early = [*faults, *decision.findings, *filter(None, [crowded(COMMAND, o.nproc, usable_cores()) if ctx is None else None])]
    lacked = ranks_lacked_torch(COMMAND, facts, report)
    if lacked is not None:
        return lacked
    return replace(report, findings=(*early, *report.findings))
