# Modelled on: https://github.com/NVIDIA/nccl/issues/479
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
for step in range(4):
    a, b = torch.full((50_000,), float(rank)), torch.empty(50_000)
    reqs = [dist.isend(a, peer), dist.irecv(b, peer)]
    for r in reqs:
        r.wait()
    dist.all_reduce(b)
