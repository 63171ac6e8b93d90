"""Seed 001 as a script: a residual `+=` after a ReLU. Prints its argv so the test sees them passed on."""
import sys

import torch
from torch import nn

print("args:", sys.argv[1:])


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.relu(self.fc(x))  # saved
        h += x  # culprit
        return h


torch.manual_seed(0)
Block()(torch.randn(2, 4)).sum().backward()
