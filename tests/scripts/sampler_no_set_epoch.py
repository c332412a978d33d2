"""Two epochs over a DistributedSampler (shuffle on) without set_epoch():
both epochs see the same order. `--set-epoch` is the fixed script."""

import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from ranks import say, start


def train(rank, world_size, args):
    data = TensorDataset(torch.arange(32.0))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    orders = []
    for epoch in range(2):
        if args.set_epoch:
            sampler.set_epoch(epoch)
        orders.append([int(x) for (batch,) in loader for x in batch])
    say(f"rank {rank}: epochs differ: {orders[0] != orders[1]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--set-epoch", action="store_true")
    start(train, parser.parse_args())
