"""`gpudoctor allreduce`: an nccl-tests-style sweep of one collective over the
ranks, checked for correctness at every size and timed for bus bandwidth.

    options.py    the command's options, their one check, -> a Sweep (sizes, backend/device)
    bandwidth.py  sizes, element counts, algbw/busbw, the results rows and their summary
    rank.py       what one rank does (torch; runs inside the ranks)
    job.py        launch the ranks (or join torchrun's), narrow NCCL failures, build the Report
    verify.py     pure: rows and link facts -> findings; the NCCL narrowing plan and its verdict
    table.py      the results table for the console and Markdown reports
    view.py       the live progress bar and table on stderr while the sweep runs

`run` below is the command's one door: the CLI (cli/allreduce.py) and the Python
API (api.allreduce) both call it, and nothing else orchestrates a sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gpudoctor.commands.allreduce.job import Hooks
    from gpudoctor.commands.allreduce.options import Options, Sweep
    from gpudoctor.core.findings import Report

COMMAND = "allreduce"


class Display(Protocol):
    """What the caller shows while the sweep runs (the CLI: view.SweepDisplay on stderr)."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> Any: ...

    def hooks(self) -> "Hooks": ...


def run(options: "Options", *, progress: "Callable[[Sweep, bool], Display] | None" = None) -> "Report":
    """Check the options, decide between local ranks and joining a torchrun/SLURM job,
    run the sweep, and return its Report (early findings first). Bad input raises
    UsageError before any work. `progress(sweep, shown)` makes the display the run
    feeds; `shown` is False on a joined rank other than 0, which reports nothing: its
    Report is a QuietReport (rank 0 reports for the job)."""
    import os
    from contextlib import nullcontext
    from dataclasses import replace

    from gpudoctor.commands.allreduce.job import Hooks, run_joined, run_local
    from gpudoctor.commands.allreduce.options import check_options, plan_sweep
    from gpudoctor.core.exit_code import ExitCode
    from gpudoctor.core.findings import Report
    from gpudoctor.core.quiet import QuietReport
    from gpudoctor.hang.failures import fault_findings, joined_failure
    from gpudoctor.launch.backend import ranks_competing_for_gpus
    from gpudoctor.launch.capacity import crowded, usable_cores
    from gpudoctor.launch.join_env import read_join_env
    from gpudoctor.launch.launcher_watch import watch_launcher
    from gpudoctor.launch.rank import adopt_fault, join_context
    from gpudoctor.launch.torch_missing import ranks_lacked_torch, torch_broken
    from gpudoctor.probe.cuda import probe_cuda

    check_options(options)  # bad input fails fast, before torch is imported
    faults = fault_findings(options.fault, adopt_fault(options.fault))
    decision = read_join_env(COMMAND, options.nproc is not None)
    if decision.blocked:
        return Report(COMMAND, decision.findings)
    ctx = join_context() if decision.join else None
    watch_launcher(ctx)  # a rank whose torchrun agent is killed stops and says so
    cuda = probe_cuda(quick=ctx is None)  # local ranks: they import torch, not this process
    if (broken := torch_broken(COMMAND, cuda)) is not None:
        return broken
    if ctx is None:
        sweep = plan_sweep(options, cuda)
    else:
        here = ranks_competing_for_gpus(ctx.local_world_size, cuda, os.environ.get("CUDA_VISIBLE_DEVICES"))
        sweep = plan_sweep(options, cuda, world=ctx.world_size, ranks_per_host=here)
    shown = ctx is None or ctx.rank == 0
    display = progress(sweep, shown) if progress is not None else None
    hooks = display.hooks() if display is not None and shown else Hooks()
    if shown:
        for line in sweep.rounding():
            hooks.on_note(line)

    early = [*faults, *decision.findings]
    if ctx is None:
        early += filter(None, [crowded(COMMAND, sweep.nproc, usable_cores())])
        with display if display is not None else nullcontext():
            outcome = run_local(sweep, hooks)
    else:
        if ctx.rank == 0 and options.nproc is not None and options.nproc != ctx.world_size:
            hooks.on_note(f"--nproc {options.nproc} ignored: this is rank 0 of a {ctx.joined_by} job of {ctx.world_size}")
        if ctx.rank == 0:
            ctx.on_rendezvous_wait = hooks.on_wait
        try:
            with display if display is not None else nullcontext():
                joined = run_joined(ctx, sweep, hooks if shown else None)
        except Exception as exc:  # a rank other than 0 (rank 0's failure is its report): rank 0 reports the job
            said = f"gpudoctor: rank {ctx.rank} failed: {type(exc).__name__}: {exc}"
            return QuietReport(COMMAND, (joined_failure(ctx, exc, "", "allreduce"),), said=said, code=ExitCode.PROBLEM)
        if joined is None:
            return QuietReport(COMMAND, ())
        outcome = joined
    lacked = ranks_lacked_torch(COMMAND, cuda, outcome.report)
    if lacked is not None:
        return lacked
    return replace(outcome.report, findings=(*early, *outcome.report.findings))
