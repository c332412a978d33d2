# Modelled on: https://github.com/pytorch/pytorch/issues/117486
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
inp = torch.arange(4, dtype=torch.float32)
out = torch.empty(4)
splits = [2, 2] if rank == 0 else [1, 3]
dist.all_to_all_single(out, inp, output_split_sizes=[2, 2], input_split_sizes=splits)  # @A
