# Modelled on: https://github.com/pytorch/torchtitan/issues/1790
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
for step in range(4):
    feats = torch.randn(2, 3, 8 if (rank == 1 and step == 2) else 7)
    if feats.shape[2] != 7:
        raise ValueError(f"spatial dim mismatch: {tuple(feats.shape)}")  # @A
    dist.all_reduce(x)
