# Modelled on: https://github.com/pytorch/pytorch/issues/21480
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
for epoch in range(3):
    seed = torch.tensor([1234 + rank])
    dist.broadcast(seed, src=rank)  # @A
    torch.manual_seed(int(seed))
