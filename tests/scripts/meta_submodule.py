"""A model built on the meta device and moved to the CPU except for one
submodule that was left behind: its first forward pass fails."""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.proj = nn.Linear(8, 4)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.proj(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


with torch.device("meta"):
    model = Net()
model.encoder.layers.to_empty(device="cpu")
model.head.to_empty(device="cpu")  # encoder.proj stays on meta: the bug
print("built")
out = model(torch.randn(5, 8))
print("never printed", out.shape)
