"""A correct little training run on the CPU: seeded, so two runs print the same
losses; the doctor must find nothing and change nothing."""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
loader = DataLoader(data, batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.6f}")
print("argv:", sys.argv[1:], "name:", __name__)
