"""Collective #2 all-reduces 4 floats on rank 0 and 5 on rank 1 (gloo aborts rank 0)."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(4))
dist.all_reduce(torch.ones(4 + rank))
print(f"rank {rank} done")
