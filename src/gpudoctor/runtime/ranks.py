"""`gpudoctor run --nproc N`: the script as N ranks through the supervised
launcher, each under the doctor, then one report merged from every rank's
facts and from how each rank ended. No printing here: the CLI does that."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass

from gpudoctor.cli.exit_code import SIGNAL_BASE, ranks_exit
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
    output_closed: bool = False  # stdout's reader left (`| head -1`): leave quietly, as a CLI does


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
        command, nproc, timeout=timeout or float("inf"), env=rank_env, echo=_stderr_line, run_dir=run_dir, watch=watch,
        own_store=True,
    )
    if result.output_closed:
        shutil.rmtree(run_dir, ignore_errors=True)
        status = SIGNAL_BASE + int(getattr(signal, "SIGPIPE", 13))  # 141, as a shell says of `yes | head -1`
        return RanksRun(Report("run", (), {}), status, run_dir, output_closed=True)
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
    if result.timed_out or result.interrupted:
        ended = launch_findings(result, machine_gpus(result))
        job = None
        status = ranks_exit(result)
    else:
        job = diagnose_run(result, watch, machine_gpus(result))
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
