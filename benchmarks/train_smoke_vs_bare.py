"""train-smoke's training-loop throughput against a plain DDP loop (no gpudoctor
code; the shape of ../shared/baselines/bare_ddp.py) with the same model, data,
batch, optimizer, steps and thread policy.

    python benchmarks/train_smoke_vs_bare.py [--nproc 2] [--steps 1000] [--rounds 5] [--per-round 3]
                                             [--device cpu|cuda] [--backend gloo|nccl]

A run's figure is train-smoke's own: steps / the slowest rank's loop time. Each
round runs the bare loop, train-smoke and the bare loop again (the A/A control)
--per-round times each, interleaved, and compares each side's best run
(measure.best_of_rounds: on a shared machine neighbours only ever slow a run).
Target (issue 14): train-smoke >= 0.97x the bare loop in every round, not only
the median. The control's figure in the same rounds is how close this machine
can tell two copies of the same loop apart; the single runs, each against the
bare run of its turn, are printed beside them.

The thread policy is the same on both sides, as torchrun's: ranks on one host
split its cores (OMP_NUM_THREADS, when set, wins). A bare loop that leaves every
rank at torch's default (all cores each) oversubscribes the CPU; on a small
busy machine that loop runs tens of times slower, which says nothing about
train-smoke.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from measure import Round, Row, best_of_rounds, best_ratios, free_port, load, runs_text

# The same job as gpudoctor.commands.train_smoke (config.py / job.py), written out again here.
FEATURES, HIDDEN, DATASET, SEED, LR, MOMENTUM = 32, 64, 4096, 0, 0.05, 0.9


def bare_rank(rank, world, port, steps, batch, device_kind, backend, out_dir):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if device_kind == "cuda":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        device = torch.device("cpu")
        if "OMP_NUM_THREADS" not in os.environ and world > 1:
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    dist.init_process_group(backend, rank=rank, world_size=world)
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(DATASET, FEATURES, generator=g)
    w = torch.randn(FEATURES, 1, generator=g) / FEATURES**0.5
    dataset = TensorDataset(x, x @ w)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=SEED)
    loader = DataLoader(dataset, batch_size=batch, sampler=sampler, pin_memory=device_kind == "cuda")
    torch.manual_seed(SEED)
    net = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1)).to(device)
    model = DDP(net, device_ids=[rank] if device_kind == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    done = epoch = 0
    start = time.perf_counter()
    while done < steps:
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            done += 1
            if done >= steps:
                break
        epoch += 1
    if device_kind == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    with open(os.path.join(out_dir, f"bare{rank}.json"), "w") as fh:
        json.dump({"seconds": seconds, "steps": done, "loss": float(loss.detach())}, fh)
    dist.barrier()
    del model, opt, loader  # DDP's reducer holds the group: let it go before the group does
    dist.destroy_process_group()


def run_bare(nproc, steps, batch, device, backend) -> float:
    import tempfile

    import torch.multiprocessing as mp

    port = free_port()
    out_dir = tempfile.mkdtemp(prefix="bare-ddp-")
    try:
        mp.start_processes(bare_rank, args=(nproc, port, steps, batch, device, backend, out_dir), nprocs=nproc,
                           start_method="spawn")  # fmt: skip
    except mp.ProcessExitedException as exc:
        # A rank that wrote its figures and then died in the backend's teardown (seen on
        # gloo: "terminate called without an active exception") measured a whole loop.
        if not all(os.path.exists(os.path.join(out_dir, f"bare{r}.json")) for r in range(nproc)):
            raise
        print(f"note: a bare rank died after its loop was measured ({exc})", file=sys.stderr)
    ranks = [json.load(open(os.path.join(out_dir, f"bare{r}.json"))) for r in range(nproc)]
    return steps / max(r["seconds"] for r in ranks)


def run_smoke(nproc, steps, batch, device, backend) -> tuple[float, bool]:
    cmd = [sys.executable, "-m", "gpudoctor", "train-smoke", "--json", "--nproc", str(nproc), "--steps", str(steps),
           "--batch-size", str(batch), "--device", device, "--backend", backend]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"train-smoke gave no JSON (exit {proc.returncode}):\n{proc.stderr[-2000:]}") from None
    return report["throughput"]["total"]["steps_per_s"], report["ok"]


TARGET = 0.97


def main(argv: list[str] | None = None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=3, help="runs of each side in a round (its best counts)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--backend", default="gloo", choices=("gloo", "nccl"))
    a = ap.parse_args(argv)
    job = (a.nproc, a.steps, a.batch_size, a.device, a.backend)

    def smoke() -> tuple[float, ...]:
        rate, ok = run_smoke(*job)
        if not ok:
            print("warning: train-smoke reported a failed verification", file=sys.stderr)
        return (rate,)

    def bare() -> tuple[float, ...]:
        return (run_bare(*job),)

    def show(index: int, r: Round) -> None:
        smoke, control = best_ratios([r], "train-smoke")[0], best_ratios([r], "control")[0]
        print(f"round {index + 1}: best train-smoke / bare {smoke:.3f}, bare (control) / bare {control:.3f}  "
              f"(steps/s: {runs_text(r)})", flush=True)

    # The control is the bare loop again under another name: what this machine makes of
    # two copies of the same loop is the floor under any figure here.
    rounds = best_of_rounds({"bare": bare, "train-smoke": smoke, "control": bare}, a.rounds, a.per_round, show)
    best, control = best_ratios(rounds, "train-smoke"), best_ratios(rounds, "control")
    single = [s[0] / b[0] for r in rounds for s, b in zip(r.runs["train-smoke"], r.runs["bare"])]
    single_control = [c[0] / b[0] for r in rounds for c, b in zip(r.runs["control"], r.runs["bare"])]
    print(f"{a.device}/{a.backend} nproc={a.nproc} steps={a.steps} batch={a.batch_size} rounds={a.rounds} "
          f"x {a.per_round} runs, {load()}")
    print(f"train-smoke / bare, best of each round: {', '.join(f'{v:.3f}' for v in best)}; worst {min(best):.3f}  "
          f"target >= {TARGET} in every round: {'met' if min(best) >= TARGET else 'NOT met'}")
    print(f"bare / bare (A/A control), best of each round: {', '.join(f'{v:.3f}' for v in control)}")
    print(f"single runs, train-smoke / the bare run of its turn: median {statistics.median(single):.3f} "
          f"[{min(single):.3f}, {max(single):.3f}]; the control's: median {statistics.median(single_control):.3f} "
          f"[{min(single_control):.3f}, {max(single_control):.3f}]")
    return [
        Row(f"train-smoke: steps/s / bare DDP loop, best of {a.per_round} runs, worst of {a.rounds} rounds",
            f"{min(best):.3f}", f"[{min(best):.3f}, {max(best):.3f}]", f">= {TARGET} every round", min(best) >= TARGET),
        Row("bare DDP loop / itself (A/A control), worst round", f"{min(control):.3f}",
            f"[{min(control):.3f}, {max(control):.3f}]", "", None),
        Row("train-smoke / bare, single runs, median", f"{statistics.median(single):.3f}",
            f"[{min(single):.3f}, {max(single):.3f}]", "", None),
        Row("bare / bare (A/A control), single runs, median", f"{statistics.median(single_control):.3f}",
            f"[{min(single_control):.3f}, {max(single_control):.3f}]", "", None),
    ]


if __name__ == "__main__":
    main()
