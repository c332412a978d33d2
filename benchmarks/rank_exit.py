"""CPU time of short jobs whose processes import torch, this checkout against
another one (e.g. main before a change), run alternately so that load on the
machine falls on both: CPU-seconds (user + system) of the command and every
process it waited for, the median of --repeat runs.

The jobs: two-rank `allreduce` and `train-smoke` (gpudoctor's own ranks,
launch/child.py: a rank ends without the interpreter's teardown, `leave`), and
`check` (its torch probe child, probe/torch_child.py).

    python benchmarks/rank_exit.py --against /path/to/other/checkout [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from measure import run_timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOBS = {
    "allreduce --nproc 2": ["allreduce", "--nproc", "2", "--sizes", "4K", "--iters", "2", "--warmup", "1", "--json"],
    "train-smoke --nproc 2": ["train-smoke", "--nproc", "2", "--steps", "40", "--json"],
    "check": ["check", "--json"],
}


def cpu_s(checkout: str, args: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("GPUDOCTOR_FAULT", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.path.join(checkout, "src")
    r = run_timed([sys.executable, "-m", "gpudoctor", *args], env=env)
    assert r.returncode in (0, 1), r.stderr[-2000:]  # check may see a problem on this machine: still measured
    return r.cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the other checkout (its src/ is put on PYTHONPATH)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, cmd in JOBS.items():
        this, other = [], []
        for _ in range(args.repeat):
            other.append(cpu_s(args.against, cmd))
            this.append(cpu_s(ROOT, cmd))
        a, b = statistics.median(other), statistics.median(this)
        print(f"{name:24s} {a:6.2f} -> {b:6.2f} CPU-s ({b - a:+.2f}, {100 * (b - a) / a:+.0f} %)")


if __name__ == "__main__":
    main()
