"""What every benchmark here measures a command with: wall time from outside,
CPU time and peak RSS of the process and the children it waited for (wait4's
rusage, per process, so one run's peak does not hide in another's), and where
the figures were taken (the machine, its load)."""

from __future__ import annotations

import os
import platform
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timed:
    returncode: int
    wall_s: float
    cpu_s: float  # user + system, the process and its reaped children
    max_rss_mb: float  # the largest of them
    stdout: str
    stderr: str


def run_timed(cmd: list[str], timeout: float = 600, env: dict[str, str] | None = None) -> Timed:
    """Run cmd to its end; on timeout its whole process group is killed and returncode is -9."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)

        def kill() -> None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        except (ProcessLookupError, PermissionError):
            pass
        out.seek(0)
        err.seek(0)
        return Timed(
            proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read(), err.read()
        )


def free_port() -> int:
    """A port on 127.0.0.1 the OS says is free now, for a bare job's rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spread(values: list[float]) -> tuple[float, float]:
    return (min(values), max(values)) if values else (float("nan"), float("nan"))


def median_ratio(num: list[float], den: list[float]) -> tuple[float, tuple[float, float]]:
    """The median of the per-pair ratios, and their [min, max]."""
    ratios = [n / d for n, d in zip(num, den)]
    return statistics.median(ratios), spread(ratios)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


@dataclass(frozen=True)
class Row:
    """One figure of a benchmark, as benchmarks/all.py puts it in docs/performance.md."""

    name: str
    value: str  # as printed: "1.013", "+1.7 MB", "no"
    spread: str  # "[0.99, 1.04]", or "" for a figure without one
    target: str  # "<= 1.02", or "" for a figure shown for context
    met: bool | None  # None: no target


def ratio_row(name: str, ratio: float, low: float, high: float, target: float | None, at_most: bool = True) -> Row:
    if target is None:
        return Row(name, f"{ratio:.3f}", f"[{low:.3f}, {high:.3f}]", "", None)
    met = ratio <= target if at_most else ratio >= target
    return Row(name, f"{ratio:.3f}", f"[{low:.3f}, {high:.3f}]", f"{'<=' if at_most else '>='} {target}", met)


def precompile_gpudoctor() -> None:
    """Byte-compile gpudoctor's modules, as a wheel install does. torch arrives
    compiled; a checkout run with PYTHONDONTWRITEBYTECODE=1 (this project's VMs set
    it) would otherwise compile ~100 modules from source on every start, a cost no
    user's install has, charged to gpudoctor's side of every start-up figure."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("gpudoctor")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


@dataclass(frozen=True)
class Round:
    """One round of `best_of_rounds`: each side's best figures over its runs in the
    round (figure by figure), and every run's figures."""

    best: dict[str, tuple[float, ...]]
    runs: dict[str, list[tuple[float, ...]]]


def best_of_rounds(sides: dict[str, Callable[[], tuple[float, ...]]], rounds: int, per_round: int,
                   report: Callable[[int, Round], None] | None = None) -> list[Round]:
    """Run every side `per_round` times in each round, the order rotated from run to
    run (a, b, c / b, c, a / c, a, b), and keep each side's best of each figure
    (a side gives a tuple of rates: higher is better). On a shared machine other tenants only ever slow a run down, and they
    come and go within seconds: the best of a few closely interleaved runs is what
    the code itself costs, where one run against one run is mostly the neighbours.
    Give the baseline twice under two names (an A/A control): how far apart two
    copies of the same thing come out is this machine's noise floor for the round."""
    names = list(sides)
    out = []
    for index in range(rounds):
        runs: dict[str, list[tuple[float, ...]]] = {name: [] for name in names}
        for turn in range(per_round):
            shift = turn % len(names)
            for name in names[shift:] + names[:shift]:
                runs[name].append(sides[name]())
        result = Round({name: tuple(map(max, zip(*values))) for name, values in runs.items()}, runs)
        if report is not None:
            report(index, result)
        out.append(result)
    return out


def best_ratios(rounds: list[Round], name: str, figure: int = 0) -> list[float]:
    """Per round, side `name`'s best figure over the baseline's (the side called "bare")."""
    return [r.best[name][figure] / r.best["bare"][figure] for r in rounds]


def runs_text(r: Round, figure: int = 0) -> str:
    """Every run's figure in a round, side by side: "bare 322, 355; doctor 288, 315"."""
    return "; ".join(f"{name} {', '.join(f'{v[figure]:.0f}' for v in values)}" for name, values in r.runs.items())
