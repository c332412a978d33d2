# Modelled on: https://github.com/pytorch/pytorch/issues/76527
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank)])
out = [torch.empty(1) for _ in range(world)]
dist.gather(t, gather_list=out, dst=rank)  # @A
