"""Ranks started with mp.spawn, each with a DataLoader with workers and no
persistent_workers: every epoch starts new workers. In a spawned rank they are
spawned too (a spawned process inherits its parent's start method), so each
one imports torch again and rebuilds the dataset before the first batch.
`--then-fixed` then runs the fixed loop (persistent_workers=True) on a loader of
its own in the same ranks, so that one job shows both."""

import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from ranks import say, start


def open_resources(worker_id):
    time.sleep(0.1)  # what each new worker pays before its first batch


def epochs_of(args, persistent):
    loader = DataLoader(
        TensorDataset(torch.arange(16.0)),
        batch_size=4,
        num_workers=args.workers,
        persistent_workers=persistent,
        worker_init_fn=open_resources,
    )
    total = 0.0
    for epoch in range(args.epochs):
        for (batch,) in loader:
            total += float(batch.sum())
    return total


def train(rank, world_size, args):
    say(f"rank {rank}: total {epochs_of(args, persistent=False)}")
    if args.then_fixed:
        say(f"rank {rank} with persistent workers: total {epochs_of(args, persistent=True)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--then-fixed", action="store_true")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args()
    start(train, args, world_size=args.ranks)
