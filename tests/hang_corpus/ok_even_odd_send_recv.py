# Modelled on: https://github.com/mpickpt/mana/pull/247
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
mine, theirs = torch.ones(1_000_000), torch.empty(1_000_000)
for step in range(3):
    if rank % 2 == 0:
        dist.send(mine, peer)
        dist.recv(theirs, peer)
    else:
        dist.recv(theirs, peer)
        dist.send(mine, peer)
