"""Code in another module: the locator must name the line here, and the caller's line in the chain."""

from torch import nn


def scale_(t, factor):
    t.mul_(factor)  # culprit
    return t


class AddBias(nn.Module):
    """A module whose forward changes its input in place."""

    def forward(self, x):
        x += 1  # culprit
        return x
