"""Reference of data_trap: the probabilities clamped out of place, visibly to autograd.

Softmax saves its output for backward. `p.data.clamp_(min=eps)` changes that output behind autograd's back
(`.data` has a version counter of its own): no error, and softmax's backward computes with the clamped values
while the clamp itself is missing from the graph. `p.clamp(min=eps)` is a new tensor: softmax's output stays
as it was saved, and the clamp's own gradient (zero where it is active) is part of the result.
"""

from __future__ import annotations

import torch

from autograder.exercises.data_trap import EXERCISE


def clamped_softmax_loss(logits: torch.Tensor, target: torch.Tensor, eps: float) -> torch.Tensor:
    """-(target * log(max(softmax(logits), eps))).sum(-1).mean(): cross-entropy with soft targets, the
    probabilities clamped at eps before the log."""
    p = logits.softmax(dim=-1)
    return -(target * p.clamp(min=eps).log()).sum(dim=-1).mean()


REFERENCE = {"clamped_softmax_loss": clamped_softmax_loss}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def fn(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return ("import math\n\nimport torch\nimport torch.nn.functional as F\n\n\n"
            f"def clamped_softmax_loss(logits, target, eps):\n{lines}")


LOSS = "return -(target * p.log()).sum(dim=-1).mean()"

# The report's code: the clamp through `.data` silences the in-place error and corrupts the gradient.
BROKEN = fn(f"""
p = logits.softmax(dim=-1)
p.data.clamp_(min=eps)
{LOSS}
""")

CORRECT = {
    "clamp out of place": fn(f"""
p = logits.softmax(dim=-1).clamp(min=eps)
{LOSS}
"""),
    "torch.clamp_min": fn(f"""
p = torch.clamp_min(F.softmax(logits, dim=-1), eps)
{LOSS}
"""),
    "where below eps": fn(f"""
p = logits.softmax(dim=-1)
p = torch.where(p < eps, eps, p)
{LOSS}
"""),
    "clone, then clamp_ in place": fn(f"""
p = logits.softmax(dim=-1).clone()
p.clamp_(min=eps)
{LOSS}
"""),
    "log_softmax clamped at log(eps)": fn("""
log_p = F.log_softmax(logits, dim=-1).clamp(min=math.log(eps))
return -(target * log_p).sum(dim=-1).mean()
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    "clamp_ on softmax's output": (fn(f"""
p = logits.softmax(dim=-1)
p.clamp_(min=eps)
{LOSS}
"""), {"backward runs", "gradients", "gradcheck"}),
    "detach().clamp_": (fn(f"""
p = logits.softmax(dim=-1)
p.detach().clamp_(min=eps)
{LOSS}
"""), {"backward runs", "gradients", "gradcheck"}),
    "no clamp: log_softmax": (fn("return -(target * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()"),
                              {"forward", "gradients"}),
    "straight-through clamp": (fn(f"""
p = logits.softmax(dim=-1)
p = p + (eps - p).clamp(min=0).detach()
{LOSS}
"""), {"gradients", "gradcheck"}),
    "clamp under no_grad": (fn(f"""
p = logits.softmax(dim=-1)
with torch.no_grad():
    p = p.clamp(min=eps)
{LOSS}
"""), {"backward runs", "gradients"}),
    "renormalised after the clamp": (fn(f"""
p = logits.softmax(dim=-1).clamp(min=eps)
p = p / p.sum(dim=-1, keepdim=True)
{LOSS}
"""), {"forward"}),
    "logits shifted in place through .data": (fn(f"""
logits.data -= logits.data.max(dim=-1, keepdim=True).values
p = logits.softmax(dim=-1).clamp(min=eps)
{LOSS}
"""), {"caller's tensors unchanged"}),
}

SAYS = {
    "detach().clamp_": ("p.detach().clamp_(min=eps)",),
}

# Softmax by hand without its max shift: exp overflows on large logits (inf / inf is NaN).
WRONG["softmax by hand, no max shift"] = (fn(f"""
e = logits.exp()
p = (e / e.sum(dim=-1, keepdim=True)).clamp(min=eps)
{LOSS}
"""), {"forward"})
# Flattened to two dimensions with view(): refused for transposed logits.
WRONG["flattened with view"] = (fn("""
flat = logits.view(-1, logits.shape[-1])
p = flat.softmax(dim=-1).clamp(min=eps)
return -(target.reshape(flat.shape) * p.log()).sum(dim=-1).mean()
"""), {"forward"})
CORRECT["softmax by hand, shifted by the max"] = fn(f"""
e = (logits - logits.max(dim=-1, keepdim=True).values).exp()
p = (e / e.sum(dim=-1, keepdim=True)).clamp(min=eps)
{LOSS}
""")
CORRECT["flattened with reshape"] = fn("""
flat = logits.reshape(-1, logits.shape[-1])
p = flat.softmax(dim=-1).clamp(min=eps)
return -(target.reshape(flat.shape) * p.log()).sum(dim=-1).mean()
""")

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = (f"""import torch


def clamped_softmax_loss(logits, target, eps):
    p = logits.softmax(dim=-1)
    # TODO: your fix goes here (see the task above).
    pass
    {LOSS}
""", {c.name for c in EXERCISE.checks})
