"""`gpudoctor run --nproc N`: the script as N ranks through the supervised
launcher, each under the doctor, then one report merged from every rank's
facts and from how each rank ended. No printing here: the CLI does that."""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass

from gpudoctor.cli.exit_code import ranks_exit
from gpudoctor.findings import Report
from gpudoctor.runtime.report import read_fragments, run_report
from gpudoctor.runtime.session import ENV_FRAGMENTS, ENV_SUPERVISED
from gpudoctor.runtime.target import Target



@dataclass(frozen=True)
class RanksRun:
    report: Report
    status: int  # the exit status the script's ranks amount to (before --strict)
    run_dir: str
    kept: bool = False  # the run folder stays (the job failed): say where it is


def _stderr_line(rank: int, line: str) -> None:
    """A rank's stderr, passed on to ours with its rank in front."""
    sys.stderr.write(f"[rank {rank}] {line}\n")
    sys.stderr.flush()


def run_ranks(
    target: Target, nproc: int, env: dict[str, str], timeout: float | None, hang_timeout: float | None = None
) -> RanksRun:
    from gpudoctor.launch import launch
    from gpudoctor.launch.collective_watch import CollectiveWatch, diagnose_run
    from gpudoctor.launch.failures import launch_findings
    from gpudoctor.launch.job import machine_gpus
    from gpudoctor.runtime.facts import UncaughtError

    run_dir = tempfile.mkdtemp(prefix="gpudoctor-run-")
    rank_env = dict(env, **{ENV_SUPERVISED: "1", ENV_FRAGMENTS: run_dir})
    command = [sys.executable, "-m", "gpudoctor.runtime.main", *target.argv()]
    watch = CollectiveWatch(run_dir, nproc, hang_timeout)
    result = launch(
        command, nproc, timeout=timeout or float("inf"), env=rank_env, echo=_stderr_line, run_dir=run_dir, watch=watch
    )
    fragments = read_fragments(run_dir)
    # A rank's own uncaught error is explained by the job's diagnosis below, as the
    # root cause or as a victim of it: the same error is not reported twice.
    facts = [f for frag in fragments for f in frag["facts"] if result.ok or not isinstance(f, UncaughtError)]
    processes = [
        {
            "label": f"rank {r.rank}",
            "state": r.state,
            "exit_code": r.exitcode,
            "signal": r.signal,
            "log": r.stderr_path,
        }
        for r in result.ranks
    ]
    job = None if result.interrupted else diagnose_run(result, watch, machine_gpus(result))
    if job is None or (result.timed_out and not job.findings):
        # Interrupted, or the watchdog fired with no collective to line the ranks up on.
        ended = launch_findings(result, machine_gpus(result))
        job = None
        status = ranks_exit(result)
    else:
        ended = list(job.findings)
        status = ranks_exit(result, job.cause_exitcode)
    report = run_report(facts, processes, target.argv(), status, ended)
    data = dict(report.data, run_dir=None if result.ok else run_dir)
    data["root_cause"] = job.root_cause if job else None
    data["ranks"] = list(job.ranks) if job else []
    report = Report(report.command, report.findings, data)
    if result.ok:
        # Nothing to look back at: keep the logs only of a run that failed.
        shutil.rmtree(run_dir, ignore_errors=True)
        for p in processes:
            p.pop("log")
    return RanksRun(report, status, run_dir, kept=not result.ok)
