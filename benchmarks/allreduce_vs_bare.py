"""Does gpudoctor's harness cost bandwidth or start-up time? The same
all-reduce measured by a plain torch.distributed loop (written here, no
gpudoctor code) and by `gpudoctor allreduce`, in one run: gloo, 2 ranks,
1 MiB / 16 MiB / 64 MiB. Goal: gpudoctor's busbw >= 0.97 x the plain loop's at
16 and 64 MiB.

Then the start-up cost (issue 14: <= 1.05x): wall time of `gpudoctor allreduce
--nproc 2 --sizes 4K --iters 1 --warmup 0` against a plain script that spawns
the same ranks, joins the process group, passes a first barrier, all-reduces
4 KiB once and leaves, each a fresh `python` process timed from outside. For
scale, a third side: the leanest launcher (the parent never imports torch, each
rank a plain `python` process joining with env://).

    python benchmarks/allreduce_vs_bare.py [--rounds 5] [--iters-scale 1] [--backend gloo] [--startup-only]

Each round runs the two back to back (alternating which goes first) and takes
the ratio within the pair, so that load from other processes on the machine
falls on both; the median ratio over rounds is reported, with its spread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from measure import Row, free_port, load, median_ratio, precompile_gpudoctor, ratio_row, run_timed

SIZES = {"1M": 1 << 20, "16M": 16 << 20, "64M": 64 << 20}
# Timed calls per size: enough that each size runs for about a second on CPU, so
# one scheduling hiccup on a shared machine does not decide the figure.
ITERS = {1 << 20: 200, 16 << 20: 50, 64 << 20: 20}
WARMUP = 5


# ---- the plain loop: one process per rank, a timed loop of all_reduce per size


def _plain_worker(rank, world, backend, sizes, iters_by_size, port, queue):
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(backend, rank=rank, world_size=world)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    out = {}
    for nbytes in sizes:
        iters = iters_by_size[nbytes]
        x = torch.zeros(nbytes // 4, dtype=torch.float32, device=device)
        for _ in range(WARMUP):
            dist.all_reduce(x)
        if backend == "nccl":
            torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        if backend == "nccl":
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / iters
        algbw = nbytes / seconds / 1e9
        out[nbytes] = algbw * 2 * (world - 1) / world
    if rank == 0:
        queue.put(out)
    dist.barrier()
    dist.destroy_process_group()


def plain_busbw(backend: str, sizes: list[int], iters: dict[int, int], world: int = 2) -> dict[int, float]:
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    mp.start_processes(
        _plain_worker, args=(world, backend, sizes, iters, port, queue), nprocs=world, start_method="spawn"
    )
    return queue.get(timeout=600)


def gpudoctor_busbw(backend: str, sizes: list[int], iters: dict[int, int], world: int = 2) -> dict[int, float]:
    """One `gpudoctor allreduce` per size (each size has its own --iters)."""
    out = {}
    for nbytes in sizes:
        cmd = [
            sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", str(world), "--backend", backend,
            "--sizes", str(nbytes), "--iters", str(iters[nbytes]), "--warmup", str(WARMUP), "--json",
        ]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"gpudoctor allreduce failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        (row,) = json.loads(proc.stdout)["results"]
        out[row["bytes"]] = row["busbw_gbps"]
    return out


# ---- start-up: a whole fresh process each, timed from outside

PLAIN_STARTUP = r"""
import os, socket, sys
import torch, torch.distributed as dist, torch.multiprocessing as mp

def worker(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    dist.barrier()
    t = torch.ones(1024)
    dist.all_reduce(t)
    dist.destroy_process_group()

if __name__ == "__main__":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mp.start_processes(worker, args=(port,), nprocs=2, start_method="spawn")
"""
# The leanest launcher there is, for scale: the parent never imports torch and starts
# each rank as a plain `python` process with env:// (as torchrun's workers are started).
LEAN_STARTUP = r"""
import os, socket, subprocess, sys

WORKER = (
    "import torch, torch.distributed as dist\n"
    "dist.init_process_group('gloo')\n"
    "dist.barrier()\n"
    "t = torch.ones(1024)\n"
    "dist.all_reduce(t)\n"
    "dist.destroy_process_group()\n"
)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2")
procs = [subprocess.Popen([sys.executable, "-c", WORKER], env=dict(env, RANK=str(r))) for r in range(2)]
sys.exit(max(p.wait() for p in procs))
"""
STARTUP_TARGET = 1.05
BUSBW_TARGET = 0.97


def wall(cmd: list[str]) -> float:
    timed = run_timed(cmd, timeout=300)
    if timed.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({timed.returncode}):\n{timed.stderr[-2000:]}")
    return timed.wall_s


def busbw(rounds: int, iters: dict[int, int], backend: str) -> list[Row]:
    # Paired measurements: per round and size, the two run back to back (which one
    # goes first alternates), and the ratio is taken within the pair, so slow
    # drifts in the machine's load cancel out.
    plain: dict[int, list[float]] = {n: [] for n in SIZES.values()}
    doctor: dict[int, list[float]] = {n: [] for n in SIZES.values()}
    for r in range(rounds):
        for i, (name, nbytes) in enumerate(SIZES.items()):
            order = [(plain, plain_busbw), (doctor, gpudoctor_busbw)]
            for store, runner in order if (r + i) % 2 == 0 else order[::-1]:
                store[nbytes].append(runner(backend, [nbytes], iters)[nbytes])
            print(
                f"round {r + 1}/{rounds} {name}: plain {plain[nbytes][-1]:.3f} gpudoctor {doctor[nbytes][-1]:.3f}",
                file=sys.stderr,
            )
    rows = []
    print(f"busbw GB/s, {backend}, 2 ranks, {rounds} paired rounds, {load()}")
    print(f"{'size':>5} {'iters':>5} {'plain (median)':>15} {'gpudoctor (median)':>19} {'ratio: median of pairs [min, max]':>35}")
    for name, nbytes in SIZES.items():
        ratio, (lo, hi) = median_ratio(doctor[nbytes], plain[nbytes])
        row = ratio_row(f"allreduce: busbw {name} / plain loop", ratio, lo, hi,
                        BUSBW_TARGET if nbytes >= 16 << 20 else None, at_most=False)
        rows.append(row)
        goal = f"  target {row.target}: {'met' if row.met else 'NOT met'}" if row.target else ""
        print(
            f"{name:>5} {iters[nbytes]:5d} {statistics.median(plain[nbytes]):15.3f} "
            f"{statistics.median(doctor[nbytes]):19.3f} "
            f"{ratio:20.3f} [{lo:.2f}, {hi:.2f}]{goal}"
        )
    return rows


def startup(rounds: int, backend: str) -> list[Row]:
    doctor_cmd = [
        sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "4K",
        "--iters", "1", "--warmup", "0", "--backend", backend,
    ]  # fmt: skip
    plain_wall: list[float] = []
    lean_wall: list[float] = []
    doctor_wall: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "plain_startup.py")  # spawn needs the worker in a real file
        with open(script, "w") as fh:
            fh.write(PLAIN_STARTUP)
        lean = os.path.join(tmp, "lean_startup.py")
        with open(lean, "w") as fh:
            fh.write(LEAN_STARTUP)
        for i in range(rounds):
            sides = [(plain_wall, [sys.executable, script]), (doctor_wall, doctor_cmd), (lean_wall, [sys.executable, lean])]
            for store, cmd in sides if i % 2 == 0 else sides[::-1]:
                store.append(wall(cmd))
            print(
                f"  start-up round {i + 1}: plain spawn {plain_wall[-1]:.2f} s, lean subprocesses {lean_wall[-1]:.2f} s, "
                f"gpudoctor {doctor_wall[-1]:.2f} s",
                flush=True,
            )
    ratio, (lo, hi) = median_ratio(doctor_wall, plain_wall)
    lean_ratio, (lean_lo, lean_hi) = median_ratio(doctor_wall, lean_wall)
    p, d, q = statistics.median(plain_wall), statistics.median(doctor_wall), statistics.median(lean_wall)
    print(f"start-up, wall time of a fresh process ({rounds} rounds, {load()})")
    print(f"  plain spawn + init + barrier + 1 all_reduce + destroy: {p:6.2f} s")
    print(f"  lean: 2 plain subprocesses, the parent without torch:   {q:6.2f} s")
    print(f"  gpudoctor allreduce --nproc 2 --sizes 4K --iters 1:    {d:6.2f} s   ({d - p:+.2f} s; {d - q:+.2f} s over lean)")
    row = ratio_row("allreduce: start-up / bare spawn", ratio, lo, hi, STARTUP_TARGET)
    lean_row = ratio_row("allreduce: start-up / lean subprocess ranks", lean_ratio, lean_lo, lean_hi, None)
    print(f"  ratio {ratio:.3f} [{lo:.3f}, {hi:.3f}]  target {row.target}: {'met' if row.met else 'NOT met'}")
    print(f"  against the lean launcher: {lean_ratio:.3f} [{lean_lo:.3f}, {lean_hi:.3f}]")
    return [row, lean_row]


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters-scale", type=float, default=1.0, help="multiply the per-size iteration counts")
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--startup-only", action="store_true", help="skip the bandwidth comparison")
    args = parser.parse_args(argv)
    precompile_gpudoctor()
    iters = {n: max(1, int(k * args.iters_scale)) for n, k in ITERS.items()}
    rows = [] if args.startup_only else busbw(args.rounds, iters, args.backend)
    return rows + startup(args.rounds, args.backend)


if __name__ == "__main__":
    main()
