"""Do `train-smoke --nproc 2` and `allreduce --nproc 2` pass every time, and
when two of each run at once on one host? (issue 18, item 5)

    python benchmarks/repeat_and_concurrency.py [--repeats 20] [--concurrent 2]

First `--repeats` consecutive runs of each command, then `--concurrent` copies
of each started together (no fixed port anywhere: the supervisor's store binds
port 0). Prints one line per command and phase: passed / runs, the exit codes
seen, wall time (median, max), and whether any process was left behind
(every process started carries a tag in its environment, found with psutil).
Exits 1 when any run failed or left a process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid

import psutil

TAG_ENV = "GPUDOCTOR_BENCH_TAG"
RUN_TIMEOUT_S = 300
COMMANDS = {
    "train-smoke": ["train-smoke", "--nproc", "2", "--json"],
    "allreduce": ["allreduce", "--nproc", "2", "--sizes", "4K,1M", "--iters", "5", "--warmup", "2", "--json"],
}


def _env(tag: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GPUDOCTOR_FAULT")}
    env[TAG_ENV] = tag
    return env


def _start(args: list[str], tag: str) -> tuple[subprocess.Popen, float]:
    cmd = [sys.executable, "-m", "gpudoctor", *args]
    return subprocess.Popen(cmd, env=_env(tag), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), time.monotonic()


def _finish(proc: subprocess.Popen, started: float) -> tuple[int, float, str]:
    try:
        _, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, time.monotonic() - started, err.decode(errors="replace")[-400:]


def _left_behind(tag: str, settle_s: float = 5.0) -> int:
    deadline = time.monotonic() + settle_s
    while True:
        alive = []
        for p in psutil.process_iter():
            try:
                if p.environ().get(TAG_ENV) == tag and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        if not alive or time.monotonic() > deadline:
            for p in alive:
                p.kill()
            return len(alive)
        time.sleep(0.1)


def _line(name: str, phase: str, results: list[tuple[int, float, str]], left: int) -> bool:
    passed = sum(1 for code, _, _ in results if code == 0)
    codes = sorted({code for code, _, _ in results})
    walls = [wall for _, wall, _ in results]
    print(
        f"{name:12s} {phase:14s} passed {passed}/{len(results)}  exit codes {codes}  "
        f"wall median {statistics.median(walls):.1f} s max {max(walls):.1f} s  left behind {left}",
        flush=True,
    )
    for code, _, err in results:
        if code != 0:
            print(f"    exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}", flush=True)
    return passed == len(results) and left == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--concurrent", type=int, default=2)
    parser.add_argument("--only", choices=sorted(COMMANDS), help="one command only")
    opts = parser.parse_args()
    print(f"cores usable: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.1f}", flush=True)
    ok = True
    for name, args in COMMANDS.items():
        if opts.only and name != opts.only:
            continue
        tag = uuid.uuid4().hex
        results = [_finish(*_start(args, tag)) for _ in range(opts.repeats)]
        ok &= _line(name, f"{opts.repeats} in a row", results, _left_behind(tag))
        tag = uuid.uuid4().hex
        started = [_start(args, tag) for _ in range(opts.concurrent)]
        results = [_finish(*s) for s in started]
        ok &= _line(name, f"{opts.concurrent} at once", results, _left_behind(tag))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
