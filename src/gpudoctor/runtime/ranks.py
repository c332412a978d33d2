"""`gpudoctor run --nproc N`: the script as N ranks through the supervised
launcher, each under the doctor, then one report merged from every rank's
facts and from how each rank ended. No printing here: the CLI does that."""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass

from gpudoctor import exit_codes
from gpudoctor.findings import Report
from gpudoctor.runtime.report import read_fragments, run_report
from gpudoctor.runtime.session import ENV_FRAGMENTS, ENV_SUPERVISED
from gpudoctor.runtime.target import Target



@dataclass(frozen=True)
class RanksRun:
    report: Report
    status: int  # the exit status the script's ranks amount to (before --strict)
    run_dir: str


def ranks_status(result) -> int:
    """One exit status for N ranks: 0 when all succeeded; else the root-cause
    rank's own (128+signal when it was killed), 124 on timeout, 130 interrupted."""
    if result.interrupted:
        return exit_codes.INTERRUPTED
    if result.ok:
        return 0
    cause = result.root_cause
    if result.timed_out and (cause is None or cause.state in ("hung", "nojoin")):
        return exit_codes.TIMEOUT
    if cause is not None and cause.exitcode is not None:
        code = cause.exitcode
        return 128 + (-code) if code < 0 else code or 1
    return 1


def _stderr_line(rank: int, line: str) -> None:
    """A rank's stderr, passed on to ours with its rank in front."""
    sys.stderr.write(f"[rank {rank}] {line}\n")
    sys.stderr.flush()


def run_ranks(target: Target, nproc: int, env: dict[str, str], timeout: float | None) -> RanksRun:
    from gpudoctor.launch import launch
    from gpudoctor.launch.failures import launch_findings

    run_dir = tempfile.mkdtemp(prefix="gpudoctor-run-")
    rank_env = dict(env, **{ENV_SUPERVISED: "1", ENV_FRAGMENTS: run_dir})
    command = [sys.executable, "-m", "gpudoctor.runtime.main", *target.argv()]
    result = launch(command, nproc, timeout=timeout or float("inf"), env=rank_env, echo=_stderr_line, run_dir=run_dir)
    fragments = read_fragments(run_dir)
    facts = [f for frag in fragments for f in frag["facts"]]
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
    status = ranks_status(result)
    report = run_report(facts, processes, target.argv(), status, launch_findings(result))
    if result.ok:
        # Nothing to look back at: keep the logs only of a run that failed.
        shutil.rmtree(run_dir, ignore_errors=True)
        for p in processes:
            p.pop("log")
    return RanksRun(report, status, run_dir)
