# Modelled on: https://github.com/pytorch/pytorch/issues/81291
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pair = dist.new_group([0, 1])  # every rank calls new_group, members use it
x = torch.ones(4)
if rank in (0, 1):
    dist.all_reduce(x, group=pair)
dist.barrier()
