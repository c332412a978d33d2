# Modelled on: https://mosaicml-composer.readthedocs-hosted.com/en/v0.10.0/api_reference/generated/composer.utils.dist.all_gather_object.html
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 0:
    cfg = [{"lr": 0.1, "epochs": 2}]
    dist.broadcast_object_list(cfg, src=0)  # @A
else:
    cfg = [{"lr": 0.1, "epochs": 2}]
dist.barrier()  # @B
