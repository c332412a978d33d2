"""A run folder that `gpudoctor run --nproc`, `allreduce` or `train-smoke` left ->
the same verdict the live report gave. The supervisor kept how the job ended
(outcome.json, launch/supervisor.write_outcome); the ranks kept their traces,
stacks and logs beside it (launch/rundir.py names them all). Both go through the
live path (watch.diagnose_run -> verdict.diagnose_job), so a folder read days
later names the same root-cause rank, kind and first finding."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.core.findings import Finding
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.verdict import JobDiagnosis
from gpudoctor.hang.watch import diagnose_run
from gpudoctor.launch.supervisor import LaunchResult, read_outcome


@dataclass(frozen=True)
class FolderVerdict:
    """What the live report said about the job, found again from its folder."""

    result: LaunchResult
    findings: tuple[Finding, ...]  # root cause first, as the live report listed them
    job: JobDiagnosis | None  # None when the live report had no job diagnosis (interrupted, still starting)


def folder_verdict(run_dir: str) -> FolderVerdict | None:
    """The verdict on the job that left `run_dir`; None when the folder has no
    outcome.json of this gpudoctor (an older folder, torchrun's logs): the caller
    reads it as logs, as before. The machine's GPUs are not asked: this may be
    another machine than the job's."""
    result = read_outcome(run_dir)
    if result is None:
        return None
    return FolderVerdict(result, *job_findings(result))


def job_findings(result: LaunchResult, watch=None, gpus: int | None = None) -> tuple[tuple[Finding, ...], JobDiagnosis | None]:
    """The findings about how the ranks ended, root cause first, and the job's
    diagnosis: from lining up the ranks' traces, except for a job interrupted, one
    with a rank still starting when --timeout fired (never in the job's collectives,
    it would be blamed for a stall it cannot be in), or one the watchdog stopped with
    no collective to line the ranks up on: then one finding per failed rank."""
    starting = result.timed_out and any(o.state == "starting" for o in result.ranks)
    job = None if result.interrupted or starting else diagnose_run(result, watch, gpus)
    if job is None or (result.timed_out and not job.findings):
        return tuple(launch_findings(result, gpus)), None
    return job.findings, job
