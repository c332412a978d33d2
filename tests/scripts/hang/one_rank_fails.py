"""Rank 1 fails at step 2 (how: raise | exit | kill); rank 0 goes on to the next all-reduce."""
import os
import signal
import sys

import torch
import torch.distributed as dist

how = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for step in range(4):
    if rank == 1 and step == 2:
        if how == "raise":
            raise ValueError(f"bad batch at step {step}")
        if how == "exit":
            os._exit(9)
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(t)
print(f"rank {rank} done")
