# Modelled on: https://github.com/pytorch/pytorch/issues/58847
import os
import sys
import time

import torch
import torch.distributed as dist

from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __init__(self, rank):
        self.rank = rank
        self.index = {i: i * 2 for i in range(6)}

    def __len__(self):
        return 8

    def __getitem__(self, i):
        key = i if self.rank == 0 else i + 3
        return torch.tensor([float(self.index[key])])  # @A


if __name__ == "__main__":
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loader = DataLoader(Shards(rank), batch_size=2, num_workers=1)
    for batch in loader:
        dist.all_reduce(batch)
