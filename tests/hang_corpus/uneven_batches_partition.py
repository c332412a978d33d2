# Modelled on: https://github.com/k2-fsa/snowfall/issues/152
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
total = 9  # utterances: not a multiple of the world size
per = -(-total // world)
mine = list(range(rank * per, min(total, (rank + 1) * per)))
model = DDP(nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in mine:
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()  # @A
    opt.step()
    opt.zero_grad()
print("epoch done", rank)
