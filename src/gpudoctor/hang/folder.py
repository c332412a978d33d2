"""A run folder that `gpudoctor run --nproc`, `allreduce` or `train-smoke` left ->
the same verdict the live report gave. The supervisor kept how the job ended
(outcome.json, launch/supervisor.write_outcome); the ranks kept their traces,
stacks and logs beside it (launch/rundir.py names them all). Both go through the
live path (verdict.diagnose_run -> verdict.diagnose_job), so a folder read days
later names the same root-cause rank, kind and first finding."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.catalog.findings.diagnose import RUN_FOLDER_INCONSISTENT
from gpudoctor.core.findings import Finding
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.verdict import JobDiagnosis, diagnose_job, diagnose_run
from gpudoctor.hang.watch import job_traces, read_traces
from gpudoctor.launch.rundir import OUTCOME_FILE
from gpudoctor.launch.supervisor import LaunchResult, ProcessState, read_outcome


@dataclass(frozen=True)
class FolderVerdict:
    """What the live report said about the job, found again from its folder."""

    result: LaunchResult
    findings: tuple[Finding, ...]  # root cause first, as the live report listed them
    job: JobDiagnosis  # its root cause and every rank's record
    not_read: tuple[tuple[str, str], ...] = ()  # (file, why): the rank files refused or read only in part


def folder_verdict(run_dir: str) -> FolderVerdict | None:
    """The verdict on the job that left `run_dir`; None when the folder has no
    outcome.json of this gpudoctor (an older folder, torchrun's logs): the caller
    reads it as logs, as before. The machine's GPUs are not asked: this may be
    another machine than the job's."""
    result = read_outcome(run_dir)  # OutcomeUnreadable when it is there but cannot be read
    if result is None:
        return None
    findings, job = job_findings(result)
    disagree = disagreements(result)
    if disagree:  # a folder that contradicts itself is never "healthy", whatever its verdict says
        findings = (inconsistent(disagree), *findings)
    traces = read_traces(run_dir, len(result.ranks))
    return FolderVerdict(result, findings, job, tuple(item for t in traces.values() for item in t.unread))


def job_findings(result: LaunchResult, watch=None, gpus: int | None = None) -> tuple[tuple[Finding, ...], JobDiagnosis]:
    """The findings about how the ranks ended, root cause first, and the job's
    diagnosis (its root cause and every rank's record, for the JSON): from lining up
    the ranks' traces, except for a job interrupted or one with a rank still starting
    when --timeout fired (never in the job's collectives, it would be blamed for a
    stall it cannot be in). Interrupted, or stopped by the watchdog with no collective
    to line the ranks up on: one finding per failed rank, from the same root_cause."""
    starting = result.timed_out and any(o.state is ProcessState.STARTING for o in result.ranks)
    if result.interrupted or starting:
        job = diagnose_job(result, job_traces(result), [], result.diagnosed, gpus)
    else:
        job = diagnose_run(result, watch, gpus)
    if result.interrupted or not (result.ok or job.findings):
        return tuple(launch_findings(result, gpus, job_traces(result))), job
    return job.findings, job


def disagreements(result: LaunchResult) -> list[str]:
    """What in an outcome.json contradicts the rest of it (a damaged or crafted file:
    the supervisor never writes these), one plain sentence each; [] when it holds together."""
    out = []
    for r in result.ranks:
        # A rank stopped (or timed out) after it raised is real: it was slow to leave.
        if r.error is not None and r.state is ProcessState.OK:
            out.append(f"rank {r.rank} is recorded as finished but also raised {r.error.type}")
        if r.state is ProcessState.OK and r.exitcode != 0:
            out.append(f"rank {r.rank} is recorded as finished but exited with {r.exitcode}")
        if r.state in (ProcessState.EXITED, ProcessState.RAISED) and r.exitcode == 0:
            out.append(f"rank {r.rank} is recorded as {r.state.value!r} with exit code 0")
    why_stopped = result.timed_out or result.interrupted or result.diagnosed or result.output_closed
    if not why_stopped and any(r.state.stopped_by_us() for r in result.ranks):
        if not any(r.state.failed_on_own() for r in result.ranks):
            out.append("ranks are recorded as stopped after another rank failed, but no rank failed")
    return out


def inconsistent(disagree: list[str]) -> Finding:
    return RUN_FOLDER_INCONSISTENT(evidence={OUTCOME_FILE: disagree}, file=OUTCOME_FILE, contradiction=disagree[0])
