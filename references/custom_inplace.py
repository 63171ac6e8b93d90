"""Reference of custom_inplace: `leaky_relu_` as an autograd Function that changes x in place.

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


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def function(forward: str, backward: str, signature: str = "x, slope=0.01") -> str:
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    bwd = "".join(f"        {line}\n" for line in backward.strip().splitlines())
    return (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "class LeakyReLU_(torch.autograd.Function):\n"
        f"    @staticmethod\n    def forward(ctx, x, slope):\n{fwd}\n"
        f"    @staticmethod\n    def backward(ctx, grad):\n{bwd}\n\n"
        f"def leaky_relu_({signature}):\n    return LeakyReLU_.apply(x, slope)\n"
    )


FROM_OUTPUT = """
(y,) = ctx.saved_tensors
return grad * torch.where(y > 0, 1.0, ctx.slope), None
"""

# The starter: changes x in place, but forgets mark_dirty and saves a copy of the input.
BROKEN = function("""
ctx.save_for_backward(x.clone())
ctx.slope = slope
torch.where(x > 0, x, x * slope, out=x)
return x
""", """
(x,) = ctx.saved_tensors
return torch.where(x > 0, grad, grad * ctx.slope), None
""")

CORRECT = {
    "mark_dirty, save the output, where": function("""
x.mul_(torch.where(x > 0, 1.0, slope))
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT),
    "save before modifying (packed after forward)": function("""
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
x.mul_(torch.where(x > 0, 1.0, slope))
return x
""", FROM_OUTPUT),
    "where with out=": function("""
torch.where(x > 0, x, x * slope, out=x)
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT),
    "masked mul_ and sign of the output": function("""
x[x < 0] *= slope
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", """
(y,) = ctx.saved_tensors
scale = (y > 0).to(grad.dtype) + (y <= 0).to(grad.dtype) * ctx.slope
return grad * scale, None
"""),
    "built-in in place inside the Function": function("""
F.leaky_relu_(x, slope)
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT),
}

WRONG = {
    # name: (code, the checks that must fail)
    "no mark_dirty": (function("""
x.mul_(torch.where(x > 0, 1.0, slope))
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT), {"in place"}),
    "saves a mask instead of the output": (function("""
ctx.save_for_backward(x > 0)
x.mul_(torch.where(x > 0, 1.0, slope))
ctx.mark_dirty(x)
ctx.slope = slope
return x
""", """
(mask,) = ctx.saved_tensors
return grad * torch.where(mask, 1.0, ctx.slope), None
"""), {"saves output"}),
    "out of place F.leaky_relu": ("import torch.nn.functional as F\n\n\ndef leaky_relu_(x, slope=0.01):\n"
                                  "    return F.leaky_relu(x, slope)\n", {"in place"}),
    "built-in leaky_relu_, no Function": ("import torch.nn.functional as F\n\n\ndef leaky_relu_(x, slope=0.01):\n"
                                          "    return F.leaky_relu_(x, slope)\n", {"in place"}),
    "relu gradient": (function("""
x.mul_(torch.where(x > 0, 1.0, slope))
ctx.mark_dirty(x)
ctx.save_for_backward(x)
return x
""", """
(y,) = ctx.saved_tensors
return grad * (y > 0), None
"""), {"gradients", "gradcheck"}),
    "x.data without mark_dirty": (function("""
x.data.mul_(torch.where(x > 0, 1.0, slope))
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT), {"in place"}),
    # The write hidden from autograd, and mark_dirty called anyway: every value, the gradient and a later
    # change's error are right, but x's counter moves by 1 (mark_dirty's own bump), not 2.
    "x.data with mark_dirty": (function("""
x.data.mul_(torch.where(x > 0, 1.0, slope))
ctx.mark_dirty(x)
ctx.save_for_backward(x)
ctx.slope = slope
return x
""", FROM_OUTPUT), {"in place"}),
    "slope ignored": (function("""
x.mul_(torch.where(x > 0, 1.0, 0.01))
ctx.mark_dirty(x)
ctx.save_for_backward(x)
return x
""", """
(y,) = ctx.saved_tensors
return grad * torch.where(y > 0, 1.0, 0.01), None
"""), {"forward", "gradients"}),
}
WRONG["no default slope"] = (
    CORRECT["mark_dirty, save the output, where"].replace("def leaky_relu_(x, slope=0.01)", "def leaky_relu_(x, slope)"),
    {"default slope"},
)

SAYS = {
    "x.data with mark_dirty": ("moved by less than 2", "`x.data`"),
}
