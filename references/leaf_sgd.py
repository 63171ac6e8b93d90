"""Reference of exercise 5, leaf_sgd: plain SGD, in place, outside autograd's recording.

Under `torch.no_grad()` autograd accepts an in-place change of a leaf that requires grad, and the
change is still made on the tensor itself (its version counter moves, unlike through `.data`).
"""

from __future__ import annotations

import torch


def sgd_step(params: list[torch.Tensor], lr: float) -> None:
    """p -= lr * p.grad for every parameter, then its gradient cleared."""
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


REFERENCE = {"sgd_step": sgd_step}
