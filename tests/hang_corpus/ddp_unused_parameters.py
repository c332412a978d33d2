# Modelled on: https://github.com/pytorch/pytorch/issues/43259
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.aux = nn.Linear(4, 1)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.body(x))


dist.init_process_group("gloo")
model = DDP(TwoHeads())
for step in range(3):
    loss = model(torch.randn(2, 4)).sum()  # @A
    loss.backward()
