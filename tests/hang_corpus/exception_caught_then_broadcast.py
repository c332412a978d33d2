# Modelled on: https://github.com/Lightning-AI/pytorch-lightning/issues/6430
import os
import sys
import time

import torch
import torch.distributed as dist

def save_checkpoint(rank, step):
    name = [f"ckpt-{step}.pt" if rank == 0 else None]
    dist.broadcast_object_list(name, src=0)  # @B
    return name[0]


dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
try:
    for step in range(5):
        if rank == 1 and step == 2:
            raise RuntimeError("bad batch")  # @A
        dist.all_reduce(x)
except RuntimeError:
    save_checkpoint(rank, step)
    raise
