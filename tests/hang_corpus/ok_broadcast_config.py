# Modelled on: https://github.com/pytorch/pytorch/issues/21480
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
cfg = [{"lr": 0.1}] if rank == 0 else [None]
dist.broadcast_object_list(cfg, src=0)
seed = torch.tensor([42 if rank == 0 else 0])
dist.broadcast(seed, src=0)
assert cfg[0]["lr"] == 0.1 and seed.item() == 42
