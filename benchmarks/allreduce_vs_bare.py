"""Does gpudoctor's harness cost bandwidth? The same all-reduce measured by a
plain torch.distributed loop (written here, no gpudoctor code) and by
`gpudoctor allreduce`, in one run: gloo, 2 ranks, 1 MiB / 16 MiB / 64 MiB.
Goal: gpudoctor's busbw >= 0.97 x the plain loop's at 16 and 64 MiB.

Then the start-up cost: wall time of `gpudoctor allreduce --nproc 2 --sizes 4K`
against a plain spawn + init_process_group + one all_reduce + destroy, each a
fresh `python` process timed from outside.

    python benchmarks/allreduce_vs_bare.py [--rounds 3] [--iters 20] [--backend gloo]

Rounds alternate the two measurements so that load from other processes on the
machine falls on both; the median over rounds is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES = {"1M": 1 << 20, "16M": 16 << 20, "64M": 64 << 20}
WARMUP = 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the plain loop: one process per rank, a timed loop of all_reduce per size


def _plain_worker(rank, world, backend, sizes, iters, port, queue):
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(backend, rank=rank, world_size=world)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    out = {}
    for nbytes in sizes:
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


def plain_busbw(backend: str, sizes: list[int], iters: int, world: int = 2) -> dict[int, float]:
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = _free_port()
    mp.start_processes(
        _plain_worker, args=(world, backend, sizes, iters, port, queue), nprocs=world, start_method="spawn"
    )
    return queue.get(timeout=600)


def gpudoctor_busbw(backend: str, sizes: list[int], iters: int, world: int = 2) -> dict[int, float]:
    cmd = [
        sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", str(world), "--backend", backend,
        "--sizes", ",".join(str(s) for s in sizes), "--iters", str(iters), "--warmup", str(WARMUP), "--json",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"gpudoctor allreduce failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    report = json.loads(proc.stdout)
    return {row["bytes"]: row["busbw_gbps"] for row in report["results"]}


# ---- start-up: a whole fresh process each, timed from outside

PLAIN_STARTUP = r"""
import os, socket, sys
import torch, torch.distributed as dist, torch.multiprocessing as mp

def worker(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    t = torch.ones(1024)
    dist.all_reduce(t)
    dist.destroy_process_group()

if __name__ == "__main__":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mp.start_processes(worker, args=(port,), nprocs=2, start_method="spawn")
"""


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--backend", default="gloo")
    args = parser.parse_args()
    sizes = list(SIZES.values())

    plain: dict[int, list[float]] = {s: [] for s in sizes}
    doctor: dict[int, list[float]] = {s: [] for s in sizes}
    for r in range(args.rounds):
        for nbytes, bw in plain_busbw(args.backend, sizes, args.iters).items():
            plain[nbytes].append(bw)
        for nbytes, bw in gpudoctor_busbw(args.backend, sizes, args.iters).items():
            doctor[nbytes].append(bw)
        print(
            f"round {r + 1}/{args.rounds}: plain "
            + " ".join(f"{plain[s][-1]:.3f}" for s in sizes)
            + " | gpudoctor "
            + " ".join(f"{doctor[s][-1]:.3f}" for s in sizes),
            file=sys.stderr,
        )

    print(f"busbw, {args.backend}, 2 ranks, {args.iters} iters, median of {args.rounds} rounds")
    print(f"{'size':>6} {'plain GB/s':>11} {'gpudoctor GB/s':>15} {'ratio':>7}")
    for name, nbytes in SIZES.items():
        p, d = statistics.median(plain[nbytes]), statistics.median(doctor[nbytes])
        goal = "  (goal >= 0.97)" if nbytes >= 16 << 20 else ""
        print(f"{name:>6} {p:11.3f} {d:15.3f} {d / p:7.3f}{goal}")

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "plain_startup.py")  # spawn needs the worker in a real file
        with open(script, "w") as fh:
            fh.write(PLAIN_STARTUP)
        plain_wall = [wall([sys.executable, script]) for _ in range(args.rounds)]
    doctor_cmd = [sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "4K", "--backend", args.backend]
    doctor_wall = [wall(doctor_cmd) for _ in range(args.rounds)]
    p, d = statistics.median(plain_wall), statistics.median(doctor_wall)
    print("\nstart-up (wall time of a fresh process, median)")
    print(f"  plain spawn + init + 1 all_reduce + destroy: {p:6.2f} s")
    print(f"  gpudoctor allreduce --nproc 2 --sizes 4K:    {d:6.2f} s   (+{d - p:.2f} s)")


if __name__ == "__main__":
    main()
