"""A correct training step: prints its loss (to compare with and without the locator), exits with argv[1]."""
import sys

import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
loss = net(torch.randn(5, 4)).pow(2).mean()
loss.backward()
print(f"loss {loss.item():.10f} grad {net[0].weight.grad.sum().item():.10f}")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
