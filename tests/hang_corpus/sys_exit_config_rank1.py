# Modelled on: https://github.com/Lightning-AI/pytorch-lightning/issues/6430
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4)
dist.all_reduce(x)
cfg = {"lr": 0.1} if rank == 0 else {}
if "lr" not in cfg:
    print("config missing lr", file=sys.stderr)
    sys.exit(2)  # @A
dist.all_reduce(x)
