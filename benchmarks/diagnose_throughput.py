"""How fast `gpudoctor diagnose` reads a big log, and how much memory it holds.

Builds two logs of --size-mb (default 1024 MB) in a temporary folder and diagnoses each
in this process on one core:
  ordinary:     healthy training lines (progress, loss prints, NCCL INFO lines, a tqdm
                bar, checkpoint paths with hashes) with the real excerpts of
                tests/fixtures/logs spread through it;
  all-warnings: every line looks like a failure to a word filter: repeated torch/NCCL
                warnings (UserWarning, c10d's [W ...] lines, NCCL WARN retries, the
                harmless IPv6 store line), with rank prefixes and timestamps, and the
                same excerpts;
  rank-words:   healthy lines that also hold the words the rank and launch readers look for
                (rank=, world_size, "Process rank:", nproc_per_node, Completed, registered),
                as frameworks print them on every line (a reader that scans every block holding
                them fell to 8.8 MB/s once, unseen by the other kinds);
  unique-warnings: (at most 100 MB) the worst case, every line a different warning, so
                no line is skipped as a repeat (for information: the per-line cost).
  nan-records:  (at most 100 MB) a run whose every logged step is nan: Hugging Face Trainer's
                records ({'loss': 0.0, 'grad_norm': nan, ...}, its nan filter's 0.0) and tqdm bars
                with loss=nan, their numbers changing on every line; each line holds a trigger and
                matches a rule, so each is read (for information: it ran at about 1 MB/s).
Prints MB/s of CPU time and peak memory (targets: >= 50 MB/s ordinary and rank-words,
>= 20 MB/s all-warnings, < 150 MB) and, beside each, `grep -c` on the same file in the same run:
the floor a line scanner cannot beat.

    python benchmarks/diagnose_throughput.py [--size-mb 1024] [--only ordinary|all-warnings|rank-words|unique-warnings|nan-records] [--keep]
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
    "INFO 2024-11-23 10:02:11,512 checkpoint.py:88 wrote shard {s} sha256={h} in 0.{e}3 s\n",
]
# Every line has a word the prefilter looks for (warning, warn, errno, deprecated ...).
WARNINGS = [
    "[rank{r}]:[W1123 10:02:{t:02d}.{s:06d} 48213 torch/distributed/distributed_c10d.py:4320] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this environment variable is thus deprecated. (function operator())\n",
    "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:{t}: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. step {s}\n",
    "  warnings.warn(\n",
    "node{n}:48213:48{r}13 [{r}] NCCL INFO NET/Socket : Using [0]eth0:10.0.{n}.{r}<0>; OOB eth0 warning: {s}\n",
    "[rank{r}]:[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n",
    "{d} - WARNING - accelerate.utils.other - Detected kernel version 4.{e}.0, which is below the recommended minimum of 5.5.0 (step {s})\n",
]

# Healthy lines dense with the words the rank reader (knowledge/ranks_heard.py) and the launch readers look for.
RANK_WORDS = [
    "[{d}] INFO trainer: rank={r} world_size=8 local_rank={r} step {s} loss {l:.4f} | Completed batch {s}\n",
    "{d} - INFO - Process rank: {r}, device: cuda:{r}, n_gpu: 1, distributed training: True, nproc_per_node=8, step {s}\n",
    "[rank{r}]: epoch {e} step {s}/50000 | loss {l:.4f} | {s} samples registered | lr 3.0e-04\n",
]


# The worst case: every line a different warning (no two alike even without their numbers),
# so no line is ever skipped as a repeat. Measured on at most 100 MB, for information.
UNIQUE = ["[rank{r}]:[W1123 10:02:{t:02d}.{s:06d} 48213 torch/nn/modules/module.py:1501] UserWarning: parameter {h} of {w} is deprecated and will be removed\n"]

# A run whose every logged step is nan (Trainer logs a loss of 0.0 then: its logging_nan_inf_filter), as its metrics
# records and its progress bar print it, every line with other numbers.
NAN_RECORDS = [
    "{{'loss': 0.0, 'grad_norm': nan, 'learning_rate': {l:.4e}, 'epoch': {e}.{s:04d}}}\n",
    "{s}%|###       | {s}/50000 [01:{t:02d}<13:48,  5.{e}5it/s, loss=nan, grad_norm=nan, lr={l:.2e}]\n",
]


def build(path: Path, size: int, templates: list[str], seed: int = 0) -> int:
    rng = random.Random(seed)
    excerpts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "tests/fixtures/logs").glob("*.log"))]
    # blocks of lines written again and again (fast; numbers differ between the 8 blocks),
    # with an excerpt every ~50 MB
    blocks = []
    for b in range(8):
        lines = []
        for i in range(20000):
            tpl = rng.choice(templates)
            lines.append(tpl.format(r=i % 8, n=i % 4, e=i % 10, s=i + b * 20000, l=rng.random(), t=i % 60,
                                    h=f"{rng.getrandbits(64):016x}", d=f"11/23/2024 10:{i % 60:02d}:{b:02d}",
                                    w="".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(12))))
        blocks.append("".join(lines).encode())
    written = inserted = 0
    if templates is UNIQUE:  # no block written twice: every line differs (made as written: bounded memory)
        with open(path, "wb") as f:
            while written < size:
                block = "".join(UNIQUE[0].format(r=i % 8, t=i % 60, s=written + i, h=f"{rng.getrandbits(64):016x}",
                                                 w="".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(12)))
                                for i in range(20000)).encode()
                f.write(block)
                written += len(block)
                if written // (50 << 20) > inserted:
                    f.write(excerpts[inserted % len(excerpts)].encode())
                    inserted += 1
        return inserted
    with open(path, "wb") as f:
        while written < size:
            block = blocks[(written // len(blocks[0])) % len(blocks)]
            f.write(block)
            written += len(block)
            if written // (50 << 20) > inserted:
                f.write(excerpts[inserted % len(excerpts)].encode())
                inserted += 1
    return inserted


def measure(name: str, log: Path, target: float) -> bool:
    from gpudoctor.commands.diagnose.inputs import resolve
    from gpudoctor.commands.diagnose.analyse import diagnose

    size = log.stat().st_size
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, cpu = time.perf_counter(), time.process_time()
    report = diagnose(resolve(str(log)))
    took, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB; the peak so far in this process
    print(f"{name}: {size / 1e6:.0f} MB: diagnose {size / 1e6 / cpu:.1f} MB/s of CPU time ({cpu:.1f} s; wall {took:.1f} s), "
          f"peak RSS {peak_mb:.0f} MB (before: {before:.0f} MB); {report.data['lines']} lines, {len(report.findings)} findings, first: {report.findings[0].id}")
    grep = shutil.which("grep")
    if grep:
        for word in ("NCCL", "-i warn"):
            t = time.perf_counter()
            out = subprocess.run([grep, "-c", *word.split(), str(log)], capture_output=True, text=True)
            g = time.perf_counter() - t
            print(f"    floor: grep -c {word}: {g:.2f} s ({size / 1e6 / g:.0f} MB/s, {out.stdout.strip()} lines)")
    # on a shared machine wall time counts other processes' work too: judge by CPU time (one core)
    ok = size / 1e6 / cpu >= target and peak_mb < 150
    print(f"    target (>= {target:.0f} MB/s of one core's time, < 150 MB peak):", "met" if ok else "NOT met")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--only", choices=("ordinary", "all-warnings", "rank-words", "unique-warnings", "nan-records"), default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-bench-"))
    try:
        runs = [("ordinary", HEALTHY, 50.0, args.size_mb), ("all-warnings", WARNINGS, 20.0, args.size_mb),
                ("rank-words", RANK_WORDS, 50.0, args.size_mb), ("unique-warnings", UNIQUE, 20.0, min(args.size_mb, 100)),
                ("nan-records", NAN_RECORDS, 20.0, min(args.size_mb, 100))]
        for name, templates, target, size_mb in runs:
            if args.only and name != args.only:
                continue
            log = tmp / f"{name}.log"
            t = time.perf_counter()
            inserted = build(log, size_mb << 20, templates)
            print(f"built {name} log: {log.stat().st_size / 1e6:.0f} MB ({inserted} real excerpts spread through it) in {time.perf_counter() - t:.1f} s")
            measure(name, log, target)
            if not args.keep:
                log.unlink()
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
