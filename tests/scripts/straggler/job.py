"""A small DDP job on gloo with one rank made slow on purpose, for the straggler
doctor: `--slow-rank R --phase data|forward|backward|optimizer|other --ms M` makes
rank R sleep M ms per step in that phase; without --slow-rank every rank does the
same work (the balanced control). Started by `gpudoctor run --nproc N` or torchrun."""

import argparse
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--slow-rank", type=int, default=-1)
parser.add_argument("--phase", default="data")
parser.add_argument("--ms", type=float, default=200.0)
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--work-ms", type=float, default=20.0, help="what every rank spends per step in forward")
args = parser.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
slow = args.ms / 1000.0 if rank == args.slow_rank else 0.0


def nap(phase):
    if slow and args.phase == phase:
        time.sleep(slow)


def collate(batch):
    nap("data")
    return torch.stack([x for x, _ in batch]), torch.stack([y for _, y in batch])


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 1)

    def forward(self, x):
        time.sleep(args.work_ms / 1000.0)  # the same work on every rank
        nap("forward")
        h = self.a(x)
        if slow and args.phase == "backward":
            h.register_hook(lambda g: (time.sleep(slow), g)[1])
        return self.b(torch.relu(h))


g = torch.Generator().manual_seed(0)
x = torch.randn(4096, 16, generator=g)
data = TensorDataset(x, x.sum(1, keepdim=True))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data, world, rank), collate_fn=collate)
model = DDP(Model())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
done = 0
for xb, yb in loader:
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(xb), yb).backward()
    nap("optimizer")
    opt.step()
    nap("other")
    done += 1
    if done >= args.steps:
        break
dist.barrier()
print(f"rank {rank}: {done} steps")
del model, opt
dist.destroy_process_group()
