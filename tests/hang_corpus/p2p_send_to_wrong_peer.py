# Modelled on: https://github.com/pytorch/pytorch/issues/117486
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(2_000_000)
if rank == 0:
    dist.send(x, dst=2)  # @A  (stage 1 is rank 1: off by one)
elif rank == 1:
    dist.recv(x, src=0)
dist.barrier()
