# Modelled on: https://discuss.pytorch.org/t/torch-distributed-barrier-hangs-in-ddp/114522/6
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank != 0:
    dist.barrier()  # @A  wait for rank 0's download
else:
    time.sleep(0.2)  # download the dataset (and forget the barrier)
x = torch.ones(4)
dist.all_reduce(x)
