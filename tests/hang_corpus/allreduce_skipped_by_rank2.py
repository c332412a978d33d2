# Modelled on: https://github.com/sgl-project/sgl-kernel-npu/issues/69
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
has_batch = rank != 2  # its shard is empty this step
if has_batch:
    dist.all_reduce(x)  # @A
dist.barrier()
