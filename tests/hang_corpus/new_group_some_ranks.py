# Modelled on: https://github.com/vllm-project/llm-compressor/pull/2869
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
dist.all_reduce(x)
if rank in (0, 1):
    pair = dist.new_group([0, 1])  # @A  rank 2 never makes it
    dist.all_reduce(x, group=pair)
dist.all_reduce(x)
