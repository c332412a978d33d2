"""Healthy but slow: rank 1 takes SECONDS per step; every step ends in an all-reduce."""
import sys
import time

import torch
import torch.distributed as dist

seconds = float(sys.argv[1])
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for step in range(3):
    if rank == 1:
        time.sleep(seconds)
    dist.all_reduce(t)
dist.destroy_process_group()
print(f"rank {rank} done: {t[0].item():g}")
