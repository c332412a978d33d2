"""What `gpudoctor run` costs a training loop that has nothing wrong with it.

A small CPU MLP training loop (DataLoader, epochs, optimizer: the shape of a
real script) runs as `python train.py` and as `gpudoctor run train.py`, in
pairs (which one goes first alternates, so drifting load on a shared machine
falls on both sides). Each run gives: the loop's wall and CPU seconds as the
script measured them, the whole process's wall and CPU seconds, and its peak
RSS (from wait4, per process). Ratios are medians of the per-pair ratios,
printed with their spread.

Targets (issue 14): loop wall and CPU <= 1.02x plain python; peak RSS <= plain + 30 MB.

    python benchmarks/run_overhead.py [--seconds 4] [--pairs 5]

One more run, untimed, counts the calls into gpudoctor's runtime code in the
second half of the loop: the deterministic side of the same question (0).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import sys
import tempfile

from measure import Row, Timed, load, median_ratio, precompile_gpudoctor, ratio_row, run_timed

TRAIN = '''
import os, sys, time
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
# Set for one untimed run: count the calls into gpudoctor's runtime in the second half of the steps.
counting = os.environ.get("COUNT_RUNTIME_CALLS")
own_calls = []
def profile(frame, event, arg):
    if event == "call" and counting in frame.f_code.co_filename:
        own_calls.append(frame.f_code.co_name)
start = time.perf_counter()
cpu = time.process_time()
while done < steps:
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        done += 1
        if counting and done == steps // 2:
            sys.setprofile(profile)
        if done == steps:
            break
sys.setprofile(None)
elapsed = time.perf_counter() - start
cpu = time.process_time() - cpu
if counting:
    print(f"runtime_calls={len(own_calls)} steps={steps - steps // 2} names={','.join(sorted(set(own_calls)))}")
print(f"loop_s={elapsed:.4f} cpu_s={cpu:.4f} loss={loss.item():.6f}")
'''

TARGET_TIME = 1.02
TARGET_RSS_MB = 30.0


def one(cmd: list[str], steps: int) -> tuple[Timed, float, float, str]:
    """The process's own figures, and the loop's (wall, CPU, loss) as the script printed them."""
    timed = run_timed([*cmd, str(steps)], timeout=600)
    m = re.search(r"loop_s=([\d.]+) cpu_s=([\d.]+) loss=([\d.]+)", timed.stdout)
    if timed.returncode != 0 or not m:
        raise SystemExit(f"{' '.join(cmd)} failed ({timed.returncode}):\n{timed.stdout}\n{timed.stderr[-2000:]}")
    return timed, float(m.group(1)), float(m.group(2)), m.group(3)


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="how long the plain loop should take")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args(argv)
    precompile_gpudoctor()

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as fh:
            fh.write(TRAIN)
        plain = [sys.executable, script]
        doctor = [sys.executable, "-m", "gpudoctor", "run", script]

        probe_steps = 200
        _, loop, _, _ = one(plain, probe_steps)
        steps = max(probe_steps, int(probe_steps * args.seconds / loop))
        print(f"{steps} steps (~{args.seconds:g} s plain), {args.pairs} pairs, alternating", flush=True)

        rows: dict[str, list[tuple[float, ...]]] = {"plain": [], "doctor": []}
        losses = set()
        for i in range(args.pairs):
            order = (("plain", plain), ("doctor", doctor))
            for name, cmd in order if i % 2 == 0 else order[::-1]:
                timed, loop, cpu, loss = one(cmd, steps)
                rows[name].append((loop, cpu, timed.wall_s, timed.cpu_s, timed.max_rss_mb))
                losses.add(loss)
            p, d = rows["plain"][-1], rows["doctor"][-1]
            print(
                f"  pair {i + 1}: loop plain {p[0]:.3f} s / doctor {d[0]:.3f} s   "
                f"cpu {p[1]:.3f} / {d[1]:.3f} s   rss {p[4]:.0f} / {d[4]:.0f} MB",
                flush=True,
            )

        # Not timed: what of gpudoctor runs per step once the loop is going (the target: nothing).
        runtime_dir = os.path.join(os.path.dirname(importlib.util.find_spec("gpudoctor").origin), "runtime")
        counted = run_timed([*doctor, "400"], env=dict(os.environ, COUNT_RUNTIME_CALLS=runtime_dir))
        calls = re.search(r"runtime_calls=(\d+) steps=(\d+) names=(\S*)", counted.stdout)
        if not calls:
            raise SystemExit(f"the counting run failed:\n{counted.stdout}\n{counted.stderr[-2000:]}")
        names_seen = [n for n in calls.group(3).split(",") if n]
        calls_text = f"{calls.group(1)} in {calls.group(2)} steps ({', '.join(names_seen) or 'none'})"

    def col(name: str, i: int) -> list[float]:
        return [r[i] for r in rows[name]]

    rss_extra = [d[4] - p[4] for p, d in zip(rows["plain"], rows["doctor"])]
    names = {"loop wall": 0, "loop CPU": 1, "process wall": 2, "process CPU": 3}
    out = []
    print(f"\ngpudoctor run vs python, {args.pairs} pairs, {load()} (median of per-pair ratios [min, max]):")
    for name, i in names.items():
        ratio, (lo, hi) = median_ratio(col("doctor", i), col("plain", i))
        # The loop is what the hooks could slow down; the process adds the CLI's fixed start-up.
        row = ratio_row(f"run: {name} / python", ratio, lo, hi, TARGET_TIME if "loop" in name else None)
        out.append(row)
        goal = f"  target {row.target}: {'met' if row.met else 'NOT met'}" if row.target else ""
        print(f"  {name:12s}: plain {statistics.median(col('plain', i)):7.3f} s  "
              f"doctor {statistics.median(col('doctor', i)):7.3f} s  ratio {ratio:.3f} [{lo:.3f}, {hi:.3f}]{goal}")
    extra = statistics.median(rss_extra)
    met = extra <= TARGET_RSS_MB
    print(f"  peak RSS    : plain {statistics.median(col('plain', 4)):.0f} MB  "
          f"doctor {statistics.median(col('doctor', 4)):.0f} MB  "
          f"+{extra:.1f} MB [{min(rss_extra):+.1f}, {max(rss_extra):+.1f}]  "
          f"target <= +{TARGET_RSS_MB:g} MB: {'met' if met else 'NOT met'}")
    print(f"  same loss every run: {len(losses) == 1}")
    print(f"  gpudoctor runtime calls in the second half of a run: {calls_text}")
    out.append(Row("run: peak RSS over python", f"{extra:+.1f} MB", f"[{min(rss_extra):+.1f}, {max(rss_extra):+.1f}]",
                    f"<= +{TARGET_RSS_MB:g} MB", met))
    # Once per epoch, iter(DataLoader) and a DistributedSampler's __iter__ are looked at; nothing else.
    per_epoch = {"loader_iter", "sampler_iter"}
    out.append(Row("run: gpudoctor runtime calls, steady loop", calls_text, "", "per epoch only",
                    set(names_seen) <= per_epoch))
    return out

if __name__ == "__main__":
    main()
