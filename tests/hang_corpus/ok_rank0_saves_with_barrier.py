# Modelled on: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/c85e47b36895d44e797536d2fbb45b3edc049767
import os
import sys
import time

import torch
import torch.distributed as dist

import tempfile

dist.init_process_group("gloo")
rank = dist.get_rank()
path = os.path.join(tempfile.gettempdir(), f"gpudoctor-corpus-ok-{os.environ['MASTER_PORT']}.pt")
if rank == 0:
    torch.save({"w": torch.ones(4)}, path)
dist.barrier()
state = torch.load(path)
dist.barrier()
if rank == 0:
    os.remove(path)
