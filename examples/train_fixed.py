"""A small DDP training job on synthetic data.

    torchrun --standalone --nproc-per-node=2 examples/train_fixed.py --epochs 2

Runs on GPUs with NCCL, or on CPU with gloo. `gpudoctor lint` finds nothing
here; its twin, examples/train_broken.py, is the same job with the usual
mistakes (compare them with `diff`).
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    return parser.parse_args()


def make_dataset(n=1024, features=16):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, features, generator=generator)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    return TensorDataset(x, y)


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total = torch.zeros(1, device=device)
    for inputs, targets in loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.detach()
    dist.all_reduce(total)
    return total.item() / (len(loader) * dist.get_world_size())


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank()

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        loss = train_one_epoch(model, loader, optimizer, device)
        if rank == 0:
            print(f"epoch {epoch}: loss {loss:.4f}")
            torch.save({"epoch": epoch, "model": model.module.state_dict()}, args.checkpoint)
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
