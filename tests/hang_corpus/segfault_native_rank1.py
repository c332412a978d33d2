# Modelled on: https://github.com/pytorch/pytorch/issues/11170
import os
import sys
import time

import torch
import torch.distributed as dist

import ctypes

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
for step in range(3):
    dist.all_reduce(x)
    if rank == 1 and step == 1:
        ctypes.string_at(0)  # @A  a broken extension dereferencing NULL
