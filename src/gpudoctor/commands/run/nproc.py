"""`gpudoctor run --nproc N`: the script as N ranks through the supervised
launcher, each under the doctor, then one report merged from every rank's
facts and from how each rank ended. No printing here: the CLI does that."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass

from gpudoctor.core.exit_code import SIGNAL_BASE, ranks_exit
from gpudoctor.core.findings import Report
from gpudoctor.knowledge.stragglers import StepVerdict, analyze_steps, verdict_json
from gpudoctor.hooks.report import read_fragments, run_report
from gpudoctor.hooks.session import ENV_FRAGMENTS, ENV_SUPERVISED
from gpudoctor.hooks.step_clock import TRACE_ENV
from gpudoctor.hooks.target import Target



@dataclass(frozen=True)
class RanksRun:
    report: Report
    status: int  # the exit status the script's ranks amount to (before --strict)
    run_dir: str
    kept: bool = False  # the run folder stays (the job failed): say where it is
    steps: StepVerdict | None = None  # where each rank's step time went (knowledge/stragglers.py)
    timelines: dict[int, list] | None = None  # each rank's trace slices, with --trace
    output_closed: bool = False  # stdout's reader left (`| head -1`): leave quietly, as a CLI does
    interrupted: bool = False  # stopped by Ctrl-C, SIGTERM or SIGHUP: the ranks did not fail of themselves


def _stderr_line(rank: int, line: str) -> None:
    """A rank's stderr, passed on to ours with its rank in front."""
    sys.stderr.write(f"[rank {rank}] {line}\n")
    sys.stderr.flush()


class StepsWatch:
    """Beside the collective watch, in the supervisor's loop: every LIVE_S, the ranks'
    published step accounting, judged, handed to `on_steps` (the live line)."""

    LIVE_S = 1.0

    def __init__(self, inner, run_dir: str, nproc: int, on_steps: Callable[[dict], None]):
        self.inner = inner
        self.run_dir = run_dir
        self.nproc = nproc
        self.on_steps = on_steps
        self.last = -self.LIVE_S

    @property
    def stalled_s(self) -> float:
        """The collective watch's, for the supervisor's outcome."""
        return self.inner.stalled_s

    def progress_at_stop(self, now: float) -> tuple[int, float]:
        return self.inner.progress_at_stop(now)

    def moving_window(self) -> float:
        return self.inner.moving_window()

    def tick(self, now: float, ended: dict):
        if now - self.last >= self.LIVE_S:
            self.last = now
            try:
                from gpudoctor.hooks.step_clock import read_steps

                self.on_steps(verdict_json(analyze_steps(read_steps(self.run_dir, self.nproc), live=True)))
            except Exception:  # noqa: BLE001 - the live line must never stop the job
                pass
        return self.inner.tick(now, ended)


def run_ranks(
    target: Target,
    nproc: int,
    env: dict[str, str],
    timeout: float | None,
    hang_timeout: float | None = None,
    on_steps: Callable[[dict], None] | None = None,
) -> RanksRun:
    """`on_steps(steps)`: about every second, the ranks' step accounting so far (the
    report's "steps" data), for a live line."""
    from gpudoctor.launch.supervisor import launch
    from gpudoctor.hang.watch import CollectiveWatch
    from gpudoctor.hang.folder import job_findings
    from gpudoctor.hang.run_ranks import machine_gpus
    from gpudoctor.hooks.facts import UncaughtError

    run_dir = tempfile.mkdtemp(prefix="gpudoctor-run-")
    rank_env = dict(env, **{ENV_SUPERVISED: "1", ENV_FRAGMENTS: run_dir})
    command = [sys.executable, "-m", "gpudoctor.hooks.main", *target.argv()]
    watch = CollectiveWatch(run_dir, nproc, hang_timeout)
    ticking = StepsWatch(watch, run_dir, nproc, on_steps) if on_steps else watch
    result = launch(
        command, nproc, timeout=timeout or float("inf"), env=rank_env, echo=_stderr_line, run_dir=run_dir, watch=ticking,
        own_store=True,
    )
    if result.output_closed:
        shutil.rmtree(run_dir, ignore_errors=True)
        status = SIGNAL_BASE + int(getattr(signal, "SIGPIPE", 13))  # 141, as a shell says of `yes | head -1`
        return RanksRun(Report("run", (), {}), status, run_dir, output_closed=True)
    fragments = read_fragments(run_dir)
    from gpudoctor.hooks.step_clock import read_steps, read_timelines

    steps = analyze_steps(read_steps(run_dir, nproc))
    timelines = read_timelines(run_dir, nproc) if env.get(TRACE_ENV) else None
    # A rank's own uncaught error is explained by the job's diagnosis below, as the
    # root cause or as a victim of it: the same error is not reported twice.
    facts = [f for frag in fragments for f in frag["facts"] if result.ok or not isinstance(f, UncaughtError)]
    # One verdict, the same `gpudoctor diagnose` finds again in the run folder
    # (hang/folder.py): the findings of how the ranks ended, the root cause and every
    # rank's one state all come from hang/verdict.py, so the report and the JSON agree.
    found, job = job_findings(result, watch, machine_gpus(result))
    ended = list(found)
    status = ranks_exit(result, job.cause_exitcode)
    processes = [
        {"label": f"rank {r.rank}", "state": r.state, "exit_code": r.exit_code, "signal": r.signal, "log": r.log}
        for r in job.ranks
    ]
    ended += steps.findings
    report = run_report(facts, processes, target.argv(), status, ended)
    data = dict(report.data, run_dir=None if result.ok else run_dir)
    data["root_cause"] = job.root_cause
    data["ranks"] = [asdict(r) for r in job.ranks]
    data["steps"] = verdict_json(steps)
    data["threads"] = result.threads()
    report = Report(report.command, report.findings, data)
    if result.ok:
        # Nothing to look back at: keep the logs only of a run that failed.
        shutil.rmtree(run_dir, ignore_errors=True)
        for p in (*processes, *data["ranks"]):
            p.pop("log")
    return RanksRun(report, status, run_dir, kept=not result.ok, steps=steps, timelines=timelines,
                    interrupted=result.interrupted)  # fmt: skip
