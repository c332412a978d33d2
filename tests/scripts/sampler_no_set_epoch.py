"""Two epochs over a DistributedSampler (shuffle on) without set_epoch():
both epochs see the same order. `--set-epoch` is the fixed script;
`--then-fixed` runs the fixed loop after the broken one, on a sampler of its own,
so that one job shows both: a finding for the first, none for the second."""

import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from ranks import say, start


def two_epochs(rank, world_size, set_epoch):
    data = TensorDataset(torch.arange(32.0))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    orders = []
    for epoch in range(2):
        if set_epoch:
            sampler.set_epoch(epoch)
        orders.append([int(x) for (batch,) in loader for x in batch])
    return orders[0] != orders[1]


def train(rank, world_size, args):
    say(f"rank {rank}: epochs differ: {two_epochs(rank, world_size, args.set_epoch)}")
    if args.then_fixed:
        say(f"rank {rank} with set_epoch: epochs differ: {two_epochs(rank, world_size, True)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--set-epoch", action="store_true")
    parser.add_argument("--then-fixed", action="store_true")
    start(train, parser.parse_args())
