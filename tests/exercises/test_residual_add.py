"""Exercise 1 (residual_add): the solution, correct alternatives and plausible wrong fixes."""


from tests.conftest import failing

ID = "residual_add"

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


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"backward runs", "gradients"} <= failing(result)
    assert "modified by an inplace operation" in next(t.output for t in result.tests if t.name == "backward runs")
