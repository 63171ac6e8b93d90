"""Reference of multi_output_view: multi-head self-attention with q scaled into a new tensor.

`chunk` returns three views of qkv's output, and autograd refuses an in-place change to an output of a
function that returns several views (`q *= self.scale`, the bug of the exercise); `q * self.scale` is a
new tensor, with the same values and the same gradients.
"""

from __future__ import annotations

import torch

from autograder.exercises.multi_output_view import EXERCISE, AttentionLayout


class Attention(AttentionLayout):
    """proj(softmax(q k^T / sqrt(head_dim)) v), per head, heads merged back; q, k, v = qkv(x).chunk(3, -1)."""

    def __init__(self, dim: int, heads: int):
        super().__init__(dim, heads)
        self.heads = heads
        self.scale = (dim // heads) ** -0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q * self.scale
        q, k, v = (t.reshape(batch, tokens, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(batch, tokens, dim))


REFERENCE = {"Attention": Attention}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
"""

SPLIT_HEADS = "q, k, v = (t.reshape(B, N, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))"
MERGE_HEADS = "return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))"


def block(body: str) -> str:
    return HEADER + "".join(f"        {line}\n" for line in body.strip().splitlines())


def with_scaling(scaling: str) -> str:
    """The report's block with its `q *= self.scale` line replaced by `scaling` (lines, or nothing)."""
    return block(f"""
q, k, v = self.qkv(x).chunk(3, dim=-1)
{scaling}
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
""")


BROKEN = with_scaling("q *= self.scale")

CORRECT = {
    "multiply into a new tensor": with_scaling("q = q * self.scale"),
    "clone, then *=": with_scaling("q = q.clone()\nq *= self.scale"),
    "scale k instead": with_scaling("k = k * self.scale"),  # (q s) . k == q . (k s), and so are the gradients
    "torch.mul": with_scaling("q = torch.mul(q, self.scale)"),
    "scale the scores": block(f"""
q, k, v = self.qkv(x).chunk(3, dim=-1)
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1)
{MERGE_HEADS}
"""),
    "scaled_dot_product_attention": block(f"""
q, k, v = self.qkv(x).chunk(3, dim=-1)
{SPLIT_HEADS}
out = F.scaled_dot_product_attention(q, k, v)  # its default scale is 1 / sqrt(head_dim)
return self.proj(out.transpose(1, 2).reshape(B, N, C))
"""),
    # Indexing returns one view at a time, which may be changed in place: nothing saved qkv's output.
    "index a reshaped qkv, then *=": block(f"""
qkv = self.qkv(x).reshape(B, N, 3, C)
q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
q *= self.scale
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
"""),
    "scale qkv's first third before chunk": block(f"""
qkv = self.qkv(x)
qkv[..., :C] *= self.scale  # linear saved its input and weight, not its output
q, k, v = qkv.chunk(3, dim=-1)
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    ".data scaling": (with_scaling("q.data *= self.scale"), {"gradients", "gradcheck"}),
    "detach, then scale": (with_scaling("q = q.detach() * self.scale"), {"gradients", "gradcheck"}),
    "no_grad around *=": (with_scaling("with torch.no_grad():\n    q *= self.scale"), {"forward", "backward runs"}),
    "scale k in place instead": (with_scaling("k *= self.scale"), {"forward", "backward runs"}),
    "scale dropped": (with_scaling(""), {"forward", "gradients"}),
    "scale after the softmax": (block(f"""
q, k, v = self.qkv(x).chunk(3, dim=-1)
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1) * self.scale
{MERGE_HEADS}
"""), {"forward", "gradients"}),
    # contiguous() copies only a non-contiguous tensor: for one token in a batch of one, q is contiguous
    "contiguous, then *=": (with_scaling("q = q.contiguous()\nq *= self.scale"), {"backward runs"}),
    "scale folded into the weights": (block(f"""
with torch.no_grad():
    self.qkv.weight[:C] *= self.scale
    self.qkv.bias[:C] *= self.scale
q, k, v = self.qkv(x).chunk(3, dim=-1)
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
"""), {"gradients", "caller's tensors unchanged"}),
}

SAYS = {
    "no_grad around *=": ("is a view and its base or another view of its base has been modified inplace",),
    "scale folded into the weights": ("changed its own parameters",),
}

# The input flattened with view() for the projection: refused for a sequence-first (transposed) x.
WRONG["flattened with view"] = (block(f"""
q, k, v = self.qkv(x.view(B * N, C)).view(B, N, 3 * C).chunk(3, dim=-1)
q = q * self.scale
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
"""), "forward")
CORRECT["flattened with reshape"] = block(f"""
q, k, v = self.qkv(x.reshape(B * N, C)).reshape(B, N, 3 * C).chunk(3, dim=-1)
q = q * self.scale
{SPLIT_HEADS}
attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
{MERGE_HEADS}
""")

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = ("""import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        # TODO: your fix goes here (see the task above).
        pass
        q, k, v = (t.reshape(B, N, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))
""", {c.name for c in EXERCISE.checks})
