# Modelled on: https://github.com/NVIDIA/nccl/issues/1417
import os
import sys
import time

import torch
import torch.distributed as dist

import numpy as np

dist.init_process_group("gloo")
rank = dist.get_rank()
acc = np.array([0.9]) if rank == 0 else np.array([0.8], dtype=np.float32)
t = torch.from_numpy(acc)
dist.all_reduce(t)  # @A
