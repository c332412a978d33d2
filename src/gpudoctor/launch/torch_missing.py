"""A torch this Python cannot import, for the commands that need one (allreduce,
train-smoke, run): a finding that explains it (exit 1), never a traceback."""

from __future__ import annotations

import os
import sys

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.probe.cuda import CudaFacts


def torch_import_finding(error: str) -> Finding:
    """The finding for a torch this Python cannot import, with what decides which torch it finds."""
    from gpudoctor.checks.torch_build import torch_import_failed

    return torch_import_failed(error, python=sys.executable, PYTHONPATH=os.environ.get("PYTHONPATH"))


def import_error_behind(cuda: CudaFacts, ranks_failed: bool, data: dict) -> str | None:
    """A quick probe (probe_cuda(quick=True)) read a CPU build's files without importing
    torch. When the ranks then failed, the import itself is asked: a torch that cannot
    be imported is what explains their failure. Not when a rank imported it (`data`, the
    report's: torch_ran_in_a_rank): then asking costs this process the import, seconds
    after every failed job and every Ctrl-C, to learn what the rank already showed."""
    if cuda.imported or not ranks_failed or torch_ran_in_a_rank(data):
        return None
    from gpudoctor.probe.cuda import probe_cuda

    return probe_cuda().import_error


def torch_ran_in_a_rank(data: dict) -> bool:
    """Whether a rank reported the threads its torch runs with (the report's `threads`,
    launch/threads.py): a rank writes them only once `import torch` has worked in it
    (launch/rundir.py write_threads)."""
    threads = data.get("threads") or {}
    return any(n is not None for n in threads.get("per_rank") or ())


def torch_broken(command: str, cuda: CudaFacts) -> Report | None:
    """The command's whole Report when torch fails to import here, before any rank starts."""
    if cuda.import_error is None:
        return None
    return Report(command, (torch_import_finding(cuda.import_error),))


def ranks_lacked_torch(command: str, cuda: CudaFacts, report: Report) -> Report | None:
    """The Report that replaces the ranks' when they failed for want of an importable torch.
    Ranks stopped by Ctrl-C (SIGTERM, SIGHUP) did not fail: the import is not asked then."""
    failed = not report.interrupted and any(f.severity is Severity.ERROR for f in report.findings)
    error = import_error_behind(cuda, failed, report.data)
    return None if error is None else Report(command, (torch_import_finding(error),))
