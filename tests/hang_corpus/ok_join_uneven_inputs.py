# Modelled on: https://github.com/microsoft/PyMarlin/issues/80
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with Join([model]):
    for step in range(3 + rank):
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
        opt.zero_grad()
