"""gpudoctor.watch(model, steps=True) around a 1-rank DDP loop whose collate
function sleeps 30 ms a batch: prints doctor.steps as JSON (tests/test_runtime_step_clock.py)."""

import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

import gpudoctor

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("PORT", "29871"), RANK="0", WORLD_SIZE="1")
dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(8, 1))  # built before the clock: watch() arms it
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def collate(batch):
    time.sleep(0.03)
    return torch.stack([x for x, in batch])


loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=4, collate_fn=collate)
with gpudoctor.watch(model, steps=True, warn=False) as doctor:
    for xb in loader:
        opt.zero_grad()
        model(xb).sum().backward()
        opt.step()
print(json.dumps({"steps": doctor.steps, "ids": [f.id for f in doctor.findings]}))
del model, opt
dist.destroy_process_group()
