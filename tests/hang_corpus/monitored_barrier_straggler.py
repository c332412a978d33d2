# Modelled on: https://github.com/pytorch/pytorch/pull/53773
import os
import sys
import time

import torch
import torch.distributed as dist

import datetime

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    time.sleep(3600)  # @A  stuck preprocessing its shard
dist.monitored_barrier(timeout=datetime.timedelta(seconds=4))  # @B
