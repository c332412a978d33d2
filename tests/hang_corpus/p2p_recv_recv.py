# Modelled on: https://github.com/NVIDIA/nccl/issues/783
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
buf = torch.empty(16)
dist.recv(buf, peer)  # @A
dist.send(torch.ones(16), peer)
