# Modelled on: https://hivebook.wiki/wiki/pytorch-ddp-nccl-hangs-watchdog-timeouts-and-desynced-collectives
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
grads = torch.ones(10)
for step in range(4):
    dist.all_reduce(grads)
    if rank == 0 and step == 1:
        loss = torch.tensor([0.5])
        dist.all_reduce(loss)  # @A
        print("mean loss", loss.item() / 2)
