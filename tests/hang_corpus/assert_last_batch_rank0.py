# Modelled on: https://github.com/Lightning-AI/litData/issues/233
import os
import sys
import time

import torch
import torch.distributed as dist

from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank = dist.get_rank()
data = TensorDataset(torch.randn(11, 3))
loader = DataLoader(data, batch_size=3, sampler=DistributedSampler(data, shuffle=False))
for (batch,) in loader:
    assert batch.shape[0] == 3, f"batch of {batch.shape[0]}"  # @A
    dist.all_reduce(batch.sum().reshape(1))
