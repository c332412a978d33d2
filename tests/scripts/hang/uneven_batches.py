"""DDP where rank 1 has one batch more than rank 0 (no drop_last)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(torch.nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.ones(3, 4)] * (3 + rank)
for x in batches:
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
print(f"rank {rank} finished {len(batches)} batches")
