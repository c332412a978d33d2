# Modelled on: https://discuss.pytorch.org/t/synchronization-mechanism-with-different-iteration-counts-of-for-loop/94234/4
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = DDP(nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best, patience = float("inf"), 0
for epoch in range(10):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    val = 1.0 if rank == 0 else 5.0 - epoch  # each rank judges its own shard
    if val < best:
        best, patience = val, 0
    else:
        patience += 1
    if patience >= 2:
        print("early stopping", rank)
        break  # @A
