"""Reference of data_trap: the weight normalised out of place, visibly to autograd.

`weight.data.div_(norm)` hides the division from autograd (wrong gradients) and overwrites the
caller's weight; dividing into a new tensor does neither.
"""

from __future__ import annotations

import torch


def normalized_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ (weight / weight.norm(dim=1, keepdim=True)).T: each row of `weight` scaled to unit length."""
    return x @ (weight / weight.norm(dim=1, keepdim=True)).T


REFERENCE = {"normalized_linear": normalized_linear}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def fn(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f"import torch\nimport torch.nn.functional as F\n\n\ndef normalized_linear(x, weight):\n{lines}"


BROKEN = fn("""
weight.div_(weight.norm(dim=1, keepdim=True))
return x @ weight.T
""")

CORRECT = {
    "divide by the norm": fn("return x @ (weight / weight.norm(dim=1, keepdim=True)).T"),
    "F.normalize": fn("return x @ F.normalize(weight, dim=1).T"),
    "linalg.vector_norm and F.linear": fn("""
w = weight / torch.linalg.vector_norm(weight, dim=1, keepdim=True)
return F.linear(x, w)
"""),
    "clone then div_ by the weight's norm": fn("""
w = weight.clone()
w.div_(weight.norm(dim=1, keepdim=True))
return x @ w.T
"""),
    "sqrt of the sum of squares": fn("""
norm = (weight * weight).sum(dim=1, keepdim=True).sqrt()
return x @ (weight / norm).t()
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    ".data dodge": (fn("""
weight.data.div_(weight.norm(dim=1, keepdim=True))
return x @ weight.T
"""), {"gradients", "gradcheck", "weight unchanged"}),
    "detached norm": (fn("return x @ (weight / weight.norm(dim=1, keepdim=True).detach()).T"), {"gradients", "gradcheck"}),
    "normalised under no_grad": (fn("""
with torch.no_grad():
    w = weight / weight.norm(dim=1, keepdim=True)
return x @ w.T
"""), {"gradients"}),
    "normalised copy written back": (fn("""
w = weight / weight.norm(dim=1, keepdim=True)
with torch.no_grad():
    weight.copy_(w)
return x @ w.T
"""), {"weight unchanged"}),
    "wrong dim": (fn("return x @ (weight / weight.norm(dim=0, keepdim=True)).T"), {"forward"}),
    "clone then div_ by its own norm": (fn("""
w = weight.clone()
w.div_(w.norm(dim=1, keepdim=True))
return x @ w.T
"""), {"backward runs"}),
}
