"""Reference of residual_add: the intended math, out of place.

`relu` saves its output for backward, so the residual is added into a new tensor (`... + x`), never
into relu's output (`out += x`, the bug of the exercise).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.exercises.residual_add import EXERCISE, ResidualBlockLayout


class ResidualBlock(ResidualBlockLayout):
    """relu(bn2(conv2(relu(bn1(conv1(x)))))) + x."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))) + x


REFERENCE = {"ResidualBlock": ResidualBlock}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import torch
import torch.nn.functional as F
from torch import nn

class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
"""


def block(body: str) -> str:
    return HEADER + "".join(f"        {line}\n" for line in body.strip().splitlines())


BROKEN = block("""
out = F.relu(self.bn1(self.conv1(x)))
out = F.relu(self.bn2(self.conv2(out)))
out += x
return out
""")

CORRECT = {
    "out of place add": BROKEN.replace("out += x", "out = out + x"),
    "clone then +=": BROKEN.replace("out += x", "out = out.clone()\n        out += x"),
    "torch.add": BROKEN.replace("out += x", "out = torch.add(out, x)"),
    "x + out": BROKEN.replace("out += x", "out = x + out"),
    "inplace relu modules after BN": block("""
out = nn.ReLU(inplace=True)(self.bn1(self.conv1(x)))
out = nn.ReLU(inplace=True)(self.bn2(self.conv2(out)))
return out + x
"""),
}

WRONG = {
    # name: (code, a check that must fail)
    ".data add": (BROKEN.replace("out += x", "out.data += x"), "gradients"),
    "no_grad around +=": (BROKEN.replace("out += x", "with torch.no_grad():\n            out += x"), "backward runs"),
    "detach cuts the graph": (BROKEN.replace("out += x", "out = out.detach() + x"), "gradients"),
    "adds into the caller's x": (BROKEN.replace("out += x\n        return out", "x += out\n        return x"),
                                 "caller's tensors unchanged"),
    "x.data add into caller": (BROKEN.replace("out += x\n        return out", "x.data += out\n        return x"),
                               "caller's tensors unchanged"),
    "relu after the add": (block("""
out = F.relu(self.bn1(self.conv1(x)))
out = self.bn2(self.conv2(out))
return F.relu(out + x)
"""), "forward"),
}

# The add done on flattened views: view() refuses an input that is not contiguous (channels last).
WRONG["flattened add"] = (BROKEN.replace("out += x", "out = (out.view(-1) + x.view(-1)).view(out.shape)"), "forward")
CORRECT["flattened with reshape"] = BROKEN.replace("out += x",
                                                   "out = (out.reshape(-1) + x.reshape(-1)).view(out.shape)")

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = ("""import torch
import torch.nn.functional as F
from torch import nn


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        # TODO: your fix goes here (see the task above).
        pass
        return out
""", {c.name for c in EXERCISE.checks})
