# Modelled on: https://github.com/NVIDIA/nccl/issues/784
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
if rank == 0:
    dist.isend(x, 1)
    dist.isend(x, 1)  # @A  a second message rank 1 never receives
else:
    dist.recv(x, 0)
dist.all_reduce(x)
