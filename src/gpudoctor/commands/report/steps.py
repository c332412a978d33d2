"""The steps of `gpudoctor report`. Each runs the command itself (the same Report
the CLI renders and the Python API returns) and ends as a StepResult: a Report, or the reason there
is none (an exception, Ctrl-C). The launcher's own watchdog bounds allreduce and
train-smoke; check's probe has its own timeout."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gpudoctor.core.findings import Report

STEP_NAMES = ("check", "allreduce", "train-smoke")
INTERRUPTED = ("interrupted", "not run: interrupted")


@dataclass(frozen=True)
class StepResult:
    name: str
    command: str  # the CLI line that does the same, for the reader to rerun
    seconds: float
    report: Report | None = None
    error: str = ""  # why there is no report: "ValueError: ...", "interrupted"
    trace: str = ""  # the traceback's last lines, for a gpudoctor bug

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok

    @property
    def interrupted(self) -> bool:
        """Ctrl-C (or SIGTERM) stopped it, or stopped an earlier step before it ran."""
        return self.error.startswith(INTERRUPTED) or (self.report is not None and self.report.interrupted)


@dataclass(frozen=True)
class Step:
    name: str
    command: str
    run: Callable[[], Report]


def plan(nproc: int, timeout: float) -> list[Step]:
    """Short runs: a few sizes and iterations, the smoke job's default length."""
    sizes = "4K,1M,16M"
    return [
        Step("check", "gpudoctor check", check),
        Step(
            "allreduce",
            f"gpudoctor allreduce --nproc {nproc} --sizes {sizes} --iters 5 --warmup 2",
            lambda: allreduce(nproc, sizes, timeout),
        ),
        Step("train-smoke", f"gpudoctor train-smoke --nproc {nproc}", lambda: train_smoke(nproc, timeout)),
    ]


# One call per command, each where the command's door will be called
# (commands.<name>.run(Options(...))) once check, allreduce and train_smoke have one.


def check() -> Report:
    from gpudoctor.checks import check_report
    from gpudoctor.probe.facts import collect

    return check_report(collect())


def allreduce(nproc: int, sizes: str, timeout: float) -> Report:
    from gpudoctor.commands.allreduce.job import run_local
    from gpudoctor.commands.allreduce.options import Options, check_options, plan_sweep
    from gpudoctor.probe.cuda import probe_cuda

    options = Options(nproc, "auto", "auto", sizes, None, None, "float32", "all_reduce", 5, 2, timeout)
    check_options(options)
    cuda = probe_cuda()
    if cuda.import_error is not None:
        return torch_missing("allreduce", cuda.import_error)
    return run_local(plan_sweep(options, cuda)).report


def train_smoke(nproc: int, timeout: float) -> Report:
    from gpudoctor.commands.train_smoke.config import SmokeConfig
    from gpudoctor.commands.train_smoke.job import run_local
    from gpudoctor.launch.backend import choose_backend
    from gpudoctor.probe.cuda import probe_cuda

    cuda = probe_cuda()
    if cuda.import_error is not None:
        return torch_missing("train-smoke", cuda.import_error)
    backend, device = choose_backend("auto", "auto", nproc, cuda)
    return run_local(SmokeConfig(nproc=nproc, backend=backend, device=device, timeout_s=timeout), cuda)


def torch_missing(command: str, import_error: str) -> Report:
    """A torch that does not import is the step's finding, not an exception."""
    from gpudoctor.commands import torch_import_finding

    return Report(command, (torch_import_finding(import_error),))


def run_steps(steps: Iterable[Step], on_start: Callable[[Step], None] = lambda step: None) -> list[StepResult]:
    """Run every step; none can stop the others. Ctrl-C ends the current step as
    "interrupted" and skips the rest, so the file still gets written."""
    results: list[StepResult] = []
    interrupted = False
    for step in steps:
        if interrupted:
            results.append(StepResult(step.name, step.command, 0.0, error="not run: interrupted before it started"))
            continue
        on_start(step)
        started = time.monotonic()
        try:
            report = step.run()
        except KeyboardInterrupt:
            interrupted = True
            results.append(StepResult(step.name, step.command, time.monotonic() - started, error="interrupted (Ctrl-C)"))
            continue
        except Exception as exc:  # noqa: BLE001 - a failing step is a section of the report
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
            results.append(
                StepResult(step.name, step.command, time.monotonic() - started, error=f"{type(exc).__name__}: {exc}", trace=trace)
            )
            continue
        # The launcher turns Ctrl-C into an interrupted report: the user still wants to stop.
        interrupted = report.interrupted
        results.append(StepResult(step.name, step.command, time.monotonic() - started, report=report))
    return results
