# Modelled on: https://github.com/k2-fsa/snowfall/issues/152
import os
import sys
import time

import torch
import torch.distributed as dist

from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

if __name__ == "__main__":
    dist.init_process_group("gloo")
    data = TensorDataset(torch.randn(11, 3))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=2, sampler=sampler, num_workers=1, drop_last=True)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            dist.all_reduce(batch)
