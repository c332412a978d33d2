# Modelled on: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/c85e47b36895d44e797536d2fbb45b3edc049767
import os
import sys
import time

import torch
import torch.distributed as dist

import tempfile

dist.init_process_group("gloo")
rank = dist.get_rank()
path = os.path.join(tempfile.gettempdir(), f"gpudoctor-corpus-ckpt-{os.environ['MASTER_PORT']}.pt")
if rank == 0:
    time.sleep(1.0)  # a big state dict takes a while
    torch.save({"w": torch.ones(4)}, path)
state = torch.load(path)  # @A  no barrier between save and load
dist.barrier()
if rank == 0:
    os.remove(path)
