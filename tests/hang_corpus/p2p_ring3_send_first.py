# Modelled on: https://github.com/hpc/libcircle/pull/45
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
activation = torch.randn(1_500_000)
grad = torch.empty(1_500_000)
# pipeline stage hand-off: everyone sends to the next stage before receiving
dist.send(activation, (rank + 1) % world)  # @A
dist.recv(grad, (rank - 1) % world)
