# Modelled on: https://github.com/NVIDIA/nccl/issues/479
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
send = torch.full((100_000,), float(rank))
recv = torch.empty(100_000)
for step in range(5):
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % world), dist.P2POp(dist.irecv, recv, (rank - 1) % world)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
assert recv[0].item() == (rank - 1) % world
