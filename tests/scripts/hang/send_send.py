"""Both ranks send before they receive: with a large tensor neither send can finish."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(1_000_000)
dist.all_reduce(x)
dist.send(x, 1 - rank)
dist.recv(x, 1 - rank)
