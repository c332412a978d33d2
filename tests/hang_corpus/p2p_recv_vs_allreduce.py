# Modelled on: https://github.com/NVIDIA/nccl/issues/783
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(8)
if rank == 0:
    dist.all_reduce(x)  # @A
    dist.send(x, 1)
else:
    dist.recv(x, 0)  # @B
    dist.all_reduce(x)
