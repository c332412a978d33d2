# Modelled on: https://githubissues.com/x10-lang/x10/18
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
epochs = 3 if rank == 0 else int(os.environ.get("EPOCHS", "2"))  # only some ranks see the override
model = DDP(nn.Linear(4, 1))
for epoch in range(epochs):
    model(torch.randn(2, 4)).sum().backward()  # @A
