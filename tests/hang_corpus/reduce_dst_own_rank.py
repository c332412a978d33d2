# Modelled on: https://github.com/pytorch/pytorch/issues/76527
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
loss = torch.tensor([float(rank)])
dist.reduce(loss, dst=rank)  # @A
print("loss", loss.item())
