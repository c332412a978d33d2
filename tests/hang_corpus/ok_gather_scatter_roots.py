# Modelled on: https://github.com/pytorch/pytorch/pull/53773
import os
import sys
import time

import torch
import torch.distributed as dist

import datetime

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank)])
out = [torch.empty(1) for _ in range(world)] if rank == 0 else None
dist.gather(t, gather_list=out, dst=0)
chunks = [torch.tensor([float(i)]) for i in range(world)] if rank == 0 else None
dist.scatter(t, scatter_list=chunks, src=0)
dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
assert t.item() == rank
