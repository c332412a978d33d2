# Modelled on: https://discuss.pytorch.org/t/training-hangs-on-loss-backward-with-ddp-nnodes-2-nproc-per-node-3/220127/2
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = model(torch.randn(4, 4)).mean()
    if rank == 1 and step == 3:
        loss = loss * float("nan")
    if torch.isnan(loss):
        print("nan loss, skipping step", step)
        continue  # @A
    loss.backward()  # @B
    opt.step()
    opt.zero_grad()
