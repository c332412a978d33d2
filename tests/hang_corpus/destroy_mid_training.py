# Modelled on: https://github.com/pytorch/torchtitan/pull/1342
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
for epoch in range(5):
    dist.all_reduce(x)
    if rank == 1 and epoch == 1:
        # "cleanup" in a per-rank error path
        dist.destroy_process_group()  # @A
        sys.exit(0)
