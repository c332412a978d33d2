# Modelled on: https://github.com/pytorch/pytorch/issues/117486
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 0:
    dist.send(torch.ones(1000), 1)
else:
    buf = torch.empty(10)
    dist.recv(buf, 0)  # @A
