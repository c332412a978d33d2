"""Rank 1 passes `at` all-reduces (default 12), then fails (how: raise | kill | hang);
rank 0 goes on to the next all-reduce. The ranks' true position is far past the
first window of records the tracer publishes."""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

how = sys.argv[1]
at = int(sys.argv[2]) if len(sys.argv) > 2 else 12
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for step in range(at + 4):
    if rank == 1 and step == at:
        if how == "raise":
            raise ValueError(f"bad batch at step {step}")
        if how == "hang":
            time.sleep(3600)
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(t)
print(f"rank {rank} done")
