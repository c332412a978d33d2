# Modelled on: https://runebook.dev/en/docs/pytorch/distributed/torch.distributed.all_gather_object
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
grads = torch.ones(16)
for epoch in range(3):
    dist.all_reduce(grads)
    if rank == 0:
        metrics = [None] * world
        dist.all_gather_object(metrics, {"acc": 0.5})  # @A
