"""Reference of custom_inplace: `prelu_(x, weight)` as an autograd Function that changes x in place.

Forward writes PReLU's output into x (x where x > 0, weight[c] * x elsewhere, c along dimension 1) and says so
(`ctx.mark_dirty`), then saves its output and the weight with `save_for_backward`, so that a later in-place
change of the result makes backward raise. The input is gone, overwritten: backward recovers it where it
matters, from the saved output (y / weight where y <= 0; weight > 0 keeps the input's signs), for the weight's
gradient, summed over every dimension but the channels'.
"""

from __future__ import annotations

import torch

from autograder.exercises.custom_inplace import EXERCISE


def _per_channel(weight: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """weight shaped to broadcast along dimension 1 of `like` ([C] for [N, C], [C, 1, 1] for [N, C, H, W])."""
    return weight.view(-1, *([1] * (like.dim() - 2)))


class _PReLUInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        torch.where(x > 0, x, x * _per_channel(weight, x), out=x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, weight)  # x is now the output
        return x

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        y, weight = ctx.saved_tensors
        w = _per_channel(weight, y)
        negative = y <= 0
        grad_x = torch.where(negative, grad * w, grad)
        x_negative = torch.where(negative, y / w, torch.zeros_like(y))  # the overwritten input, where it counts
        grad_weight = (grad * x_negative).sum([d for d in range(y.dim()) if d != 1])
        return grad_x, grad_weight


def prelu_(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x where x > 0, weight[c] * x elsewhere, written into x itself."""
    return _PReLUInplace.apply(x, weight)


REFERENCE = {"prelu_": prelu_}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def function(forward: str, backward: str) -> str:
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    bwd = "".join(f"        {line}\n" for line in backward.strip().splitlines())
    return (
        "import torch\n\n\n"
        "class PReLU_(torch.autograd.Function):\n"
        f"    @staticmethod\n    def forward(ctx, x, weight):\n{fwd}\n"
        f"    @staticmethod\n    def backward(ctx, grad):\n{bwd}\n\n"
        "def prelu_(x, weight):\n    return PReLU_.apply(x, weight)\n"
    )


W = "w = weight.view(-1, *([1] * (x.dim() - 2)))"
FORWARD = f"""
{W}
torch.where(x > 0, x, x * w, out=x)
ctx.mark_dirty(x)
ctx.save_for_backward(x, weight)
return x
"""
FROM_OUTPUT = """
y, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (y.dim() - 2)))
grad_x = torch.where(y > 0, grad, grad * w)
x = torch.where(y > 0, torch.zeros_like(y), y / w)
return grad_x, (grad * x).sum([d for d in range(y.dim()) if d != 1])
"""

# A first attempt, as the notebook's broken Function is written: the write made, but autograd not told, and a
# copy of the input saved (memory the in-place op was meant to save; the counter never checks a copy).
BROKEN = function(f"""
ctx.save_for_backward(x.clone(), weight)
{W}
torch.where(x > 0, x, x * w, out=x)
return x
""", """
x, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (x.dim() - 2)))
return torch.where(x > 0, grad, grad * w), (grad * torch.where(x > 0, 0, x)).sum(
    [d for d in range(x.dim()) if d != 1])
""")

CORRECT = {
    "where with out=, the input from the output": function(FORWARD, FROM_OUTPUT),
    "mul_ by per-entry factors": function(f"""
{W}
x.mul_(torch.where(x > 0, torch.ones_like(x), w))
ctx.mark_dirty(x)
ctx.save_for_backward(x, weight)
return x
""", FROM_OUTPUT),
    "saved before the write (packed after forward)": function(f"""
ctx.mark_dirty(x)
ctx.save_for_backward(x, weight)
{W}
torch.where(x > 0, x, x * w, out=x)
return x
""", FROM_OUTPUT),
    "the weight's gradient by movedim and reshape": function(FORWARD, """
y, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (y.dim() - 2)))
negative = y <= 0
grad_x = grad * torch.where(negative, w, torch.ones_like(y))
per_channel = (grad * torch.where(negative, y / w, torch.zeros_like(y))).movedim(1, -1)
return grad_x, per_channel.reshape(-1, y.shape[1]).sum(0)
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    "no mark_dirty": (function(f"""
{W}
torch.where(x > 0, x, x * w, out=x)
ctx.save_for_backward(x, weight)
return x
""", FROM_OUTPUT), {"in place"}),
    "saves a copy of the input": (function(f"""
ctx.save_for_backward(x.clone(), weight)
{W}
torch.where(x > 0, x, x * w, out=x)
ctx.mark_dirty(x)
return x
""", """
x, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (x.dim() - 2)))
return torch.where(x > 0, grad, grad * w), (grad * torch.where(x > 0, 0, x)).sum(
    [d for d in range(x.dim()) if d != 1])
"""), {"saves output"}),
    "keeps the output on ctx": (function(f"""
{W}
torch.where(x > 0, x, x * w, out=x)
ctx.mark_dirty(x)
ctx.y, ctx.weight = x, weight
return x
""", """
y, weight = ctx.y, ctx.weight
w = weight.view(-1, *([1] * (y.dim() - 2)))
grad_x = torch.where(y > 0, grad, grad * w)
x = torch.where(y > 0, torch.zeros_like(y), y / w)
return grad_x, (grad * x).sum([d for d in range(y.dim()) if d != 1])
"""), {"saves output"}),
    "the weight's gradient from the output, not the input": (function(FORWARD, """
y, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (y.dim() - 2)))
grad_x = torch.where(y > 0, grad, grad * w)
return grad_x, (grad * torch.where(y > 0, torch.zeros_like(y), y)).sum([d for d in range(y.dim()) if d != 1])
"""), {"gradients", "gradcheck"}),
    "no gradient for the weight": (function(FORWARD, """
y, weight = ctx.saved_tensors
w = weight.view(-1, *([1] * (y.dim() - 2)))
return torch.where(y > 0, grad, grad * w), None
"""), {"gradients", "gradcheck"}),
    "built-in prelu, out of place": ("import torch.nn.functional as F\n\n\ndef prelu_(x, weight):\n"
                                     "    return F.prelu(x, weight)\n", {"in place"}),
    # The write hidden from autograd, and mark_dirty called anyway: every value, the gradients and a later
    # change's error are right, but x's counter moves by 1 (mark_dirty's own bump), not 2.
    "x.data with mark_dirty": (function(f"""
{W}
x.data.copy_(torch.where(x > 0, x, x * w))
ctx.mark_dirty(x)
ctx.save_for_backward(x, weight)
return x
""", FROM_OUTPUT), {"in place"}),
    # Flattened with view(): refused for an input that is not contiguous.
    "flattened with view": (function("""
flat = x.view(x.shape[0], x.shape[1], -1)
w = weight.view(1, -1, 1)
torch.where(flat > 0, flat, flat * w, out=flat)
ctx.mark_dirty(x)
ctx.save_for_backward(x, weight)
return x
""", FROM_OUTPUT), {"forward"}),
    # A check of its own, whose message a loose pattern accepts: PyTorch's words, no tensor and no versions.
    "an error of its own in backward": (function(f"""
{W}
torch.where(x > 0, x, x * w, out=x)
ctx.mark_dirty(x)
ctx.y, ctx.weight, ctx.version = x, weight, x._version
return x
""", """
y, weight = ctx.y, ctx.weight
if y._version != ctx.version:
    raise RuntimeError("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation")
w = weight.view(-1, *([1] * (y.dim() - 2)))
grad_x = torch.where(y > 0, grad, grad * w)
x = torch.where(y > 0, torch.zeros_like(y), y / w)
return grad_x, (grad * x).sum([d for d in range(y.dim()) if d != 1])
"""), {"saves output"}),
    # The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
    "starter without the raise": ('''import torch


class PReLU_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        # TODO: your fix goes here (see the task above).
        pass

    @staticmethod
    def backward(ctx, grad):
        # TODO: your fix goes here (see the task above).
        pass


def prelu_(x, weight):
    return PReLU_.apply(x, weight)
''', {c.name for c in EXERCISE.checks}),
}

SAYS = {
    "x.data with mark_dirty": ("moved by less than 2", "`x.data`"),
    "an error of its own in backward": ("not PyTorch's version check",),
}
