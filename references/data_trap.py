"""Reference of exercise 6, data_trap: the weight normalised out of place, visibly to autograd.

`weight.data.div_(norm)` hides the division from autograd (wrong gradients) and overwrites the
caller's weight; dividing into a new tensor does neither.
"""

from __future__ import annotations

import torch


def normalized_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ (weight / weight.norm(dim=1, keepdim=True)).T: each row of `weight` scaled to unit length."""
    return x @ (weight / weight.norm(dim=1, keepdim=True)).T


REFERENCE = {"normalized_linear": normalized_linear}
