"""How fast `gpudoctor diagnose` reads a big log, and how much memory it holds.

Builds a log of --size-mb (default 1024 MB) in a temporary folder: healthy training
lines (progress, loss prints, NCCL INFO lines, a tqdm bar) with the real excerpts of
tests/fixtures/logs spread through it, then diagnoses it in this process on one core.
Prints MB/s and peak memory (targets: >= 50 MB/s, < 150 MB) and, beside them, the time
of `grep -c NCCL` on the same file: the floor a line scanner cannot beat.

    python benchmarks/diagnose_throughput.py [--size-mb 1024] [--keep]
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

HEALTHY = [
    "[rank{r}]: epoch {e} step {s}/50000 | loss {l:.4f} | lr 3.0e-04 | 812.3 samples/s | grad_norm 1.22\n",
    "node{n}:48213:48{r}13 [{r}] NCCL INFO Channel 01/02 :    0   1   2   3   4   5   6   7\n",
    "[default{r}]:{{'loss': {l:.4f}, 'grad_norm': 0.94, 'learning_rate': 2.9e-05, 'epoch': 0.{e}}}\n",
    "  8%|##        | {s}/50000 [01:12<13:48,  5.55it/s, loss={l:.3f}]\n",
    "INFO 2024-11-23 10:02:11,512 trainer.py:214 saving checkpoint to /ckpt/step_{s}.pt\n",
    "node{n}:48213:48{r}13 [{r}] NCCL INFO Connected all rings\n",
]


def build(path: Path, size: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    excerpts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "tests/fixtures/logs").glob("*.log"))]
    # a block of healthy lines, written again and again (fast), with an excerpt every ~50 MB
    lines = []
    for i in range(20000):
        tpl = rng.choice(HEALTHY)
        lines.append(tpl.format(r=i % 8, n=i % 4, e=i % 10, s=i, l=rng.random()))
    block = "".join(lines).encode()
    written = inserted = 0
    with open(path, "wb") as f:
        while written < size:
            f.write(block)
            written += len(block)
            if written // (50 << 20) > inserted:
                f.write(excerpts[inserted % len(excerpts)].encode())
                inserted += 1
    return inserted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    args = ap.parse_args()

    from gpudoctor.diagnose.inputs import resolve
    from gpudoctor.diagnose.run import diagnose

    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-bench-"))
    log = tmp / "big.log"
    try:
        t = time.perf_counter()
        inserted = build(log, args.size_mb << 20)
        size = log.stat().st_size
        print(f"built {size / 1e6:.0f} MB ({inserted} real excerpts spread through healthy lines) in {time.perf_counter() - t:.1f} s")

        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t, cpu = time.perf_counter(), time.process_time()
        report = diagnose(resolve(str(log)))
        took, cpu = time.perf_counter() - t, time.process_time() - cpu
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
        print(f"diagnose: {size / 1e6 / took:.1f} MB/s wall ({took:.1f} s), {size / 1e6 / cpu:.1f} MB/s of CPU time ({cpu:.1f} s), peak RSS {peak_mb:.0f} MB "
              f"(before diagnose {rss_before / 1024:.0f} MB); {report.data['lines']} lines, {len(report.findings)} findings, "
              f"first: {report.findings[0].id}")

        grep = shutil.which("grep")
        if grep:
            t = time.perf_counter()
            out = subprocess.run([grep, "-c", "NCCL", str(log)], capture_output=True, text=True)
            g = time.perf_counter() - t
            print(f"floor: grep -c NCCL: {g:.1f} s ({size / 1e6 / g:.0f} MB/s, {out.stdout.strip()} lines)")
        # on a shared machine wall time counts other processes' work too: judge by CPU time (one core)
        ok = size / 1e6 / cpu >= 50 and peak_mb < 150
        print("targets (>= 50 MB/s of one core's time, < 150 MB peak):", "met" if ok else "NOT met")
    finally:
        if args.keep:
            print(f"kept {log}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
