# Modelled on: https://github.com/pytorch/pytorch/issues/102438
import os
import sys
import time

import torch
import torch.distributed as dist

import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
layers = [nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1)]
if rank == 1:
    layers.insert(0, nn.Linear(4, 4))  # a LoRA adapter applied on one rank only
model = DDP(nn.Sequential(*layers))  # @A
