"""Wall and CPU time of `gpudoctor check` against `python -m torch.utils.collect_env`,
interleaved in one run so both see the same machine load.

    python benchmarks/check_vs_collect_env.py [RUNS]
"""

import os
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "gpudoctor check": [sys.executable, "-m", "gpudoctor", "check"],
    "python -m torch.utils.collect_env": [sys.executable, "-m", "torch.utils.collect_env"],
}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    wall: dict[str, list[float]] = {k: [] for k in COMMANDS}
    cpu: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(runs):
        for name, cmd in COMMANDS.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            wall[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if done.returncode != 0:
                sys.exit(f"{name} exited {done.returncode}: {done.stderr[-500:]}")
    print(f"{runs} runs each, interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name in COMMANDS:
        runs_text = " / ".join(f"{t:.2f}" for t in wall[name])
        print(f"{name:36s} wall {runs_text} s  median {statistics.median(wall[name]):.2f} s"
              f"  CPU median {statistics.median(cpu[name]):.2f} s")


if __name__ == "__main__":
    main()
