"""Rank 0 all-reduces where rank 1 broadcasts: collective #3 differs in kind."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for step in range(2):
    dist.all_reduce(t)
if rank == 0:
    dist.all_reduce(t)
else:
    dist.broadcast(t, src=0)
print(f"rank {rank} done")
