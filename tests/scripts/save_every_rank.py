"""Every rank saves the DDP model's state_dict to the same file: the keys
carry 'module.' and two ranks write one path. `--rank0-only` is the fixed
script (rank 0 saves model.module.state_dict()); `--then-fixed` saves both ways,
the broken one first, to two files, so that one job shows both."""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ranks import say, start


def save_on_rank0(model, rank, path):
    if rank == 0:
        torch.save(model.module.state_dict(), path)


def train(rank, world_size, args):
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Linear(4, 2))
    model(torch.randn(3, 4)).sum().backward()
    path = os.path.join(args.out, "checkpoint.pt")
    if args.rank0_only:
        save_on_rank0(model, rank, path)
    else:
        torch.save(model.state_dict(), path)
    dist.barrier()
    if args.then_fixed:
        save_on_rank0(model, rank, os.path.join(args.out, "fixed.pt"))
        dist.barrier()
    say(f"rank {rank}: saved")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--rank0-only", action="store_true")
    parser.add_argument("--then-fixed", action="store_true")
    start(train, parser.parse_args())
