"""What the hang & crash doctor costs a healthy job, and how fast it sees a mismatch.

1. Steps/s of a healthy 2-rank DDP training loop (gloo, CPU) under
   `gpudoctor run --nproc 2`, with the collective tracking on (the default: Flight
   Recorder + hooks + the publishing thread + the supervisor's watch) and off
   (GPUDOCTOR_RUN_COLLECTIVES=0), alternating in one run; the median ratio of
   each pair is reported. Goal: >= 0.98.
2. Detection latency of a collective mismatch: seconds from the mismatched call
   (the collective's own creation time in the Flight Recorder) to the moment the
   supervisor's watch decides to stop the job. Goal: <= 5 s.

    python benchmarks/hang_tracking.py [--rounds 3] [--seconds 4]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

LOOP = textwrap.dedent(
    """
    import sys, time
    import torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    seconds = float(sys.argv[1])
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256)

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()

    for _ in range(20):
        step()
    # Both ranks stop after the same number of steps: rank 0 decides when the time is up.
    steps, start, go = 0, time.perf_counter(), torch.ones(1)
    while go.item() > 0:
        for _ in range(10):
            step()
        steps += 10
        go.fill_(1.0 if time.perf_counter() - start < seconds else 0.0)
        dist.broadcast(go, src=0)
    if dist.get_rank() == 0:
        print(f"steps/s {steps / (time.perf_counter() - start):.2f}")
    dist.destroy_process_group()
    """
)

MISMATCH = textwrap.dedent(
    """
    import torch, torch.distributed as dist
    dist.init_process_group("gloo")
    t = torch.ones(1024)
    for _ in range(50):
        dist.all_reduce(t)
    if dist.get_rank() == 0:
        dist.all_reduce(t)
    else:
        dist.broadcast(t, src=0)
    """
)


def steps_per_s(script: str, seconds: float, tracking: bool) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1")  # two ranks on a small machine: no thread oversubscription
    env.pop("GPUDOCTOR_RUN", None)
    if not tracking:
        env["GPUDOCTOR_RUN_COLLECTIVES"] = "0"
    cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", script, str(seconds)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    m = re.search(r"steps/s ([\d.]+)", r.stdout)
    if r.returncode != 0 or not m:
        raise SystemExit(f"the healthy loop failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return float(m.group(1))


def detection_latency(script: str) -> float:
    """Run the mismatching job through the launcher and time the watch's decision."""
    from gpudoctor.launch.supervisor import launch
    from gpudoctor.hang.watch import CollectiveWatch, read_traces

    decided: list[float] = []

    class TimedWatch(CollectiveWatch):
        def tick(self, now, returncodes):
            reason = super().tick(now, returncodes)
            if reason and not decided:
                decided.append(time.time())
            return reason

    run_dir = tempfile.mkdtemp(prefix="gpudoctor-bench-")
    watch = TimedWatch(run_dir, 2, hang_timeout=0)
    env = {"GPUDOCTOR_RUN_SUPERVISED": "1", "GPUDOCTOR_RUN_FRAGMENTS": run_dir, "GPUDOCTOR_RUN": "1"}
    command = [sys.executable, "-m", "gpudoctor.hooks.main", script]
    result = launch(command, 2, timeout=120, env=env, run_dir=run_dir, watch=watch)
    if result.diagnosed != "mismatch" or not decided:
        raise SystemExit(f"the mismatch was not detected: {result.diagnosed!r}")
    traces = read_traces(run_dir, 2)
    called = max(r.time_ns for t in traces.values() for r in t.records if r.seq == 51) / 1e9
    return decided[0] - called


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        loop = os.path.join(tmp, "healthy_loop.py")
        with open(loop, "w") as fh:
            fh.write(LOOP)
        mismatch = os.path.join(tmp, "mismatch.py")
        with open(mismatch, "w") as fh:
            fh.write(MISMATCH)
        ratios = []
        for i in range(args.rounds):
            order = [True, False] if i % 2 == 0 else [False, True]
            got = {on: steps_per_s(loop, args.seconds, on) for on in order}
            ratios.append(got[True] / got[False])
            print(f"round {i + 1}: tracking on {got[True]:.1f} steps/s, off {got[False]:.1f} steps/s, ratio {ratios[-1]:.3f}")
        print(f"steps/s with tracking / without: median {statistics.median(ratios):.3f} (goal >= 0.98)")
        latencies = [detection_latency(mismatch) for _ in range(args.rounds)]
        print("mismatch detection latency: " + ", ".join(f"{x:.2f} s" for x in latencies)
              + f"; median {statistics.median(latencies):.2f} s (goal <= 5 s)")


if __name__ == "__main__":
    main()
