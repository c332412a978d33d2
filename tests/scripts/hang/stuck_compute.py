"""Rank 1 gets stuck loading its next shard while rank 0 waits in the all-reduce."""
import sys
import time

import torch
import torch.distributed as dist


def load_next_shard(rank, step):
    if rank == 1 and step == 1:
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 3600)
    return torch.ones(4)


dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(3):
    batch = load_next_shard(rank, step)
    dist.all_reduce(batch)
print(f"rank {rank} done")
