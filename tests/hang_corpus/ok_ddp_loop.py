# Modelled on: https://github.com/pytorch/pytorch/pull/122358
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    model(torch.randn(4, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
