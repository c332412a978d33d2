# Modelled on: https://github.com/facebookresearch/fairseq/issues/810
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
dist.all_reduce(x)
if rank == 1:
    cache = torch.empty(1 << 50)  # @A  a cache sized for the wrong machine
dist.all_reduce(x)
