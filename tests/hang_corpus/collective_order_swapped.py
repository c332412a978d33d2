# Modelled on: https://github.com/NVIDIA/nccl/issues/1417
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
loss = torch.tensor([1.0])
grads = torch.ones(32)
if rank == 0:
    dist.all_reduce(loss)
    dist.all_reduce(grads)
else:
    dist.all_reduce(grads)  # @A
    dist.all_reduce(loss)
