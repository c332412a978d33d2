"""A device error inside a rank started by mp.spawn: the rank explains it, and
the traceback torch sends to the parent is the plain one."""

import torch
from torch import nn

from ranks import start


def train(rank, world_size, args):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    if rank == 1:
        model[2].to("meta")  # only rank 1 has the bug
    model(torch.randn(3, 4))


if __name__ == "__main__":
    start(train, world_size=2)
