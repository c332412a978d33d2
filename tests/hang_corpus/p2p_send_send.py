# Modelled on: https://github.com/NVIDIA/nccl/issues/479
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
mine = torch.full((2_000_000,), float(rank))
theirs = torch.empty(2_000_000)
dist.send(mine, peer)  # @A
dist.recv(theirs, peer)
print("exchanged", theirs[0].item())
