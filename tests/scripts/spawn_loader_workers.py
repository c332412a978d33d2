"""Ranks started with mp.spawn, each with a DataLoader with 2 workers and no
persistent_workers: every epoch starts new workers, and each worker takes a
while to get ready (as one that opens files or connections does).
`--persistent` is the fixed script."""

import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from ranks import start


def open_resources(worker_id):
    time.sleep(0.3)  # what each new worker pays before its first batch


def train(rank, world_size, args):
    loader = DataLoader(
        TensorDataset(torch.arange(16.0)),
        batch_size=4,
        num_workers=2,
        persistent_workers=args.persistent,
        worker_init_fn=open_resources,
    )
    total = 0.0
    for epoch in range(args.epochs):
        for (batch,) in loader:
            total += float(batch.sum())
    print(f"rank {rank}: total {total}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--persistent", action="store_true")
    parser.add_argument("--epochs", type=int, default=2)
    start(train, parser.parse_args())
