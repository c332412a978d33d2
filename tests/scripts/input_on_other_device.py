"""A module whose parameters were never materialised (meta), called with a CPU
tensor it moves itself: it runs, and the doctor warns before anything fails."""

import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, device="meta"))

    def forward(self, x):
        return x.to(self.w.device) * self.w


model = nn.Sequential(Scale())
out = model(torch.randn(2, 4))
print("ran on", out.device)
