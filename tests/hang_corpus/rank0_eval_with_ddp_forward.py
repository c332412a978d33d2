# Modelled on: https://discuss.pytorch.org/t/torch-distributed-barrier-hangs-in-ddp/114522/6
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for step in range(2):
        loss = model(torch.randn(8, 4)).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    if rank == 0:
        with torch.no_grad():
            model(torch.randn(8, 4))  # @A  use model.module for rank-0-only evaluation
