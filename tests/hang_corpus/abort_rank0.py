# Modelled on: https://github.com/pytorch/pytorch/pull/22907
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
dist.all_reduce(x)
if rank == 0:
    os.abort()  # @A  what a failed C++ assertion does
dist.all_reduce(x)
