# Modelled on: https://github.com/meta-pytorch/torchcomms/pull/405
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
preds = torch.arange(5 + rank, dtype=torch.float32)  # last shard is shorter
out = [torch.empty_like(preds) for _ in range(world)]
dist.all_gather(out, preds)  # @A
