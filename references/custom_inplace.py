"""Reference of exercise 7, custom_inplace: `leaky_relu_` as an autograd Function that changes x in place.

Forward scales the negatives in place and says so (`ctx.mark_dirty`), then saves its output with
`save_for_backward`, so that a later in-place change of the result makes backward raise; backward reads
the signs from the saved output (slope > 0 keeps the input's signs).
"""

from __future__ import annotations

import torch


class _LeakyReLUInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, slope: float) -> torch.Tensor:
        torch.where(x > 0, x, x * slope, out=x)  # exact in float64 (a scalar tensor would be float32)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)  # x is now the output
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (y,) = ctx.saved_tensors
        return torch.where(y > 0, grad, grad * ctx.slope), None


def leaky_relu_(x: torch.Tensor, slope: float = 0.01) -> torch.Tensor:
    """x where x > 0, slope * x elsewhere, written into x itself."""
    return _LeakyReLUInplace.apply(x, slope)


REFERENCE = {"leaky_relu_": leaky_relu_}
