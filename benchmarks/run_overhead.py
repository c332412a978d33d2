"""What the runtime hooks cost a training loop that has nothing wrong with it.

A small CPU MLP training loop (DataLoader, epochs, optimizer: the shape of a
real script) runs as `python train.py` and as `gpudoctor run train.py`,
alternately, in one run; each process reports the time its loop took. The
goal is a ratio <= 1.05. Not a timed test: run it by hand.

    python benchmarks/run_overhead.py [--seconds 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TRAIN = '''
import sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
steps = int(sys.argv[1])
per_epoch = 100
data = TensorDataset(torch.randn(per_epoch * 64, 128), torch.randint(0, 10, (per_epoch * 64,)))
loader = DataLoader(data, batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
done = 0
start = time.perf_counter()
cpu = time.process_time()
while done < steps:
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        done += 1
        if done == steps:
            break
elapsed = time.perf_counter() - start
cpu = time.process_time() - cpu
print(f"loop_s={elapsed:.4f} cpu_s={cpu:.4f} loss={loss.item():.6f}")
'''


def run(cmd: list[str]) -> tuple[float, float, float, str]:
    """(loop seconds and loop CPU seconds as the script measured them, whole process seconds, loss)."""
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    wall = time.perf_counter() - start
    m = re.search(r"loop_s=([\d.]+) cpu_s=([\d.]+) loss=([\d.]+)", out)
    if not m:
        raise SystemExit(f"unexpected output from {cmd}: {out!r}")
    return float(m.group(1)), float(m.group(2)), wall, m.group(3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the plain loop should take")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as fh:
            fh.write(TRAIN)
        plain = [sys.executable, script]
        doctor = [sys.executable, "-m", "gpudoctor", "run", script]

        probe_steps = 300
        loop, _, _, _ = run(plain + [str(probe_steps)])
        steps = max(probe_steps, int(probe_steps * args.seconds / loop))
        print(f"{steps} steps (~{args.seconds:g} s plain); {args.repeats} runs of each, alternating")

        results: dict[str, list[tuple[float, float, float]]] = {"plain": [], "doctor": []}
        losses = set()
        for _ in range(args.repeats):
            for name, cmd in (("plain", plain), ("doctor", doctor)):
                loop, cpu, wall, loss = run(cmd + [str(steps)])
                results[name].append((loop, cpu, wall))
                losses.add(loss)
                print(f"  {name:6s} loop {loop:7.3f} s (cpu {cpu:7.3f} s)   process {wall:7.3f} s   loss {loss}")

    def best(name: str, i: int) -> float:
        return min(r[i] for r in results[name])

    loop_ratio = best("doctor", 0) / best("plain", 0)
    cpu_ratio = best("doctor", 1) / best("plain", 1)
    wall_ratio = best("doctor", 2) / best("plain", 2)
    med_ratio = statistics.median(r[0] for r in results["doctor"]) / statistics.median(r[0] for r in results["plain"])
    print(f"training loop: plain {best('plain', 0):.3f} s, under gpudoctor run {best('doctor', 0):.3f} s "
          f"-> ratio {loop_ratio:.3f} (best of {args.repeats}; median ratio {med_ratio:.3f})")
    print(f"training loop CPU time: ratio {cpu_ratio:.3f} (less sensitive to other load on the machine)")
    print(f"whole process (interpreter start, imports, exit): ratio {wall_ratio:.3f}")
    print(f"same loss every run: {len(losses) == 1}")
    print("goal: ratio <= 1.05 ->", "met" if loop_ratio <= 1.05 else "NOT met")


if __name__ == "__main__":
    main()
