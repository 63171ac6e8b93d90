"""Reference of leaf_sgd: plain SGD, in place, outside autograd's recording.

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


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def step(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f"import torch\n\n\ndef sgd_step(params, lr):\n{lines}"


BROKEN = step("""
for p in params:
    p -= lr * p.grad
    p.grad = None
""")

CORRECT = {
    "no_grad -=, grad None": step("""
with torch.no_grad():
    for p in params:
        p -= lr * p.grad
        p.grad = None
"""),
    "no_grad sub_, zero_": step("""
with torch.no_grad():
    for p in params:
        p.sub_(lr * p.grad)
for p in params:
    p.grad.zero_()
"""),
    "add_ with alpha": step("""
for p in params:
    with torch.no_grad():
        p.add_(p.grad, alpha=-lr)
    p.grad = None
"""),
    "detach().sub_ shares the counter": step("""
for p in params:
    p.detach().sub_(lr * p.grad)
    p.grad = None
"""),
    "copy_ under no_grad": step("""
with torch.no_grad():
    for p in params:
        p.copy_(p - lr * p.grad)
        p.grad = None
"""),
    "torch.optim.SGD": step("""
opt = torch.optim.SGD(params, lr=lr)
opt.step()
opt.zero_grad()
"""),
}

WRONG = {
    # name: (code, a check that must fail)
    ".data update": (step("""
for p in params:
    p.data -= lr * p.grad
    p.grad = None
"""), "version advanced"),
    "rebinding the loop name": (step("""
for p in params:
    p = p - lr * p.grad
    p.grad = None
"""), "values"),
    "requires_grad switched off and left off": (step("""
for p in params:
    p.requires_grad = False
    p -= lr * p.grad
    p.grad = None
"""), "still a leaf"),
    "grad not cleared": (step("""
with torch.no_grad():
    for p in params:
        p -= lr * p.grad
"""), "grad cleared"),
    "new tensors into the list": (step("""
with torch.no_grad():
    for i, p in enumerate(params):
        params[i] = (p - lr * p.grad).requires_grad_()
"""), "same tensors"),
    "zero_grad before the update": (step("""
with torch.no_grad():
    for p in params:
        p.grad.zero_()
        p -= lr * p.grad
"""), "values"),
    "p.data assigned a new tensor": (step("""
for p in params:
    p.data = p.data - lr * p.grad
    p.grad = None
"""), "same tensors"),
}
