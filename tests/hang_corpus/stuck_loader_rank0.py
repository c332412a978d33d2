# Modelled on: https://github.com/pytorch/pytorch/issues/87995
import os
import sys
import time

import torch
import torch.distributed as dist

import queue

dist.init_process_group("gloo")
rank = dist.get_rank()
q = queue.Queue()
for i in range(3):
    q.put(torch.ones(4))
x = torch.ones(4)
for step in range(5):
    batch = q.get() if rank == 1 or step < 2 else q.get(timeout=3600)  # @A
    dist.all_reduce(batch)
