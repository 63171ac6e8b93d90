"""Reference of leaf_sgd: torch.optim.SGD's own update, given the caller's momentum buffers as its state.

`torch.optim.SGD(params, lr, momentum, weight_decay)` (dampening 0, no Nesterov) runs its step with
autograd off, updates each parameter and each momentum buffer in place (`buf.mul_(momentum).add_(d_p)`,
`p.add_(buf, alpha=-lr)`), and `zero_grad()` sets every .grad to None (set_to_none=True, the default
since torch 2.0). A buffer found in its state is used as it is, so the caller's buffers are the ones
updated. The reference calls the function SGD.step calls, `torch.optim.sgd.sgd`, itself: the same update,
without the step's wrapper, whose first call imports dynamo (about a second of every grader that runs
this reference from a cold start). tests/exercises/test_leaf_sgd.py holds it to torch.optim.SGD, bit for
bit.
"""

from __future__ import annotations

import torch
from torch.optim.sgd import sgd

from autograder.exercises.leaf_sgd import EXERCISE


def sgd_step(params: list[torch.Tensor], buffers: list[torch.Tensor], lr: float, momentum: float,
             weight_decay: float) -> None:
    """d_p = p.grad + weight_decay * p; buf = momentum * buf + d_p; p = p - lr * buf; p.grad = None."""
    stepped = [(p, buf) for p, buf in zip(params, buffers) if p.grad is not None]  # as SGD skips the others
    with torch.no_grad():
        sgd([p for p, _ in stepped], [p.grad for p, _ in stepped], [buf for _, buf in stepped],
            weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=0.0, nesterov=False, maximize=False)
    for p in params:
        p.grad = None


REFERENCE = {"sgd_step": sgd_step}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

def step(body: str, decorator: str = "") -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f"import torch\n\n\n{decorator}def sgd_step(params, buffers, lr, momentum, weight_decay):\n{lines}"


# The step as first written: the leaf error at `p -= lr * buf`, after the first buffer got a history.
BROKEN = step("""
for p, buf in zip(params, buffers):
    d_p = p.grad + weight_decay * p
    buf.mul_(momentum).add_(d_p)
    p -= lr * buf
    p.grad = None
""")

CORRECT = {
    "no_grad around the whole step": step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        d_p = p.grad + weight_decay * p
        buf.mul_(momentum).add_(d_p)
        p -= lr * buf
        p.grad = None
"""),
    "decorated with torch.no_grad()": step("""
for p, buf in zip(params, buffers):
    buf.mul_(momentum).add_(p.grad).add_(p, alpha=weight_decay)
    p.sub_(lr * buf)
    p.grad = None
""", decorator="@torch.no_grad()\n"),
    "torch.optim.SGD holding the buffers": step("""
opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
for p, buf in zip(params, buffers):
    opt.state[p]["momentum_buffer"] = buf
opt.step()
opt.zero_grad()
"""),
    "detach() shares the counter": step("""
for p, buf in zip(params, buffers):
    w = p.detach()  # same storage, same version counter, no history
    buf.mul_(momentum).add_(p.grad + weight_decay * w)
    w.sub_(lr * buf)
    p.grad = None
"""),
    "copy_ under no_grad": step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        buf.copy_(momentum * buf + p.grad + weight_decay * p)
        p.copy_(p - lr * buf)
for p in params:
    p.grad = None
"""),
    "foreach ops": step("""
with torch.no_grad():
    grads = [p.grad + weight_decay * p for p in params]
    torch._foreach_mul_(buffers, momentum)
    torch._foreach_add_(buffers, grads)
    torch._foreach_add_(params, buffers, alpha=-lr)
for p in params:
    p.grad = None
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    ".data update": (step("""
for p, buf in zip(params, buffers):
    d_p = p.grad + weight_decay * p
    buf.mul_(momentum).add_(d_p)
    p.data -= lr * buf
    p.grad = None
"""), {"version advanced", "momentum buffers"}),
    ".data everywhere": (step("""
for p, buf in zip(params, buffers):
    buf.mul_(momentum).add_(p.grad + weight_decay * p.data)
    p.data -= lr * buf
    p.grad = None
"""), {"version advanced"}),
    "no_grad around the parameter update only": (step("""
for p, buf in zip(params, buffers):
    d_p = p.grad + weight_decay * p
    buf.mul_(momentum).add_(d_p)
    with torch.no_grad():
        p -= lr * buf
    p.grad = None
"""), {"momentum buffers"}),
    "rebinding the loop name": (step("""
for p, buf in zip(params, buffers):
    d_p = p.grad + weight_decay * p
    buf.mul_(momentum).add_(d_p)
    p = p - lr * buf
    p.grad = None
"""), {"values", "version advanced"}),
    "new tensors into the lists": (step("""
with torch.no_grad():
    for i, (p, buf) in enumerate(zip(params, buffers)):
        buffers[i] = momentum * buf + p.grad + weight_decay * p
        params[i] = (p - lr * buffers[i]).requires_grad_()
"""), {"same tensors"}),
    "p.data assigned a new tensor": (step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        buf.mul_(momentum).add_(p.grad + weight_decay * p)
        p.data = p.data - lr * buf
        p.grad = None
"""), {"same tensors", "version advanced"}),
    "requires_grad switched off and left off": (step("""
for p, buf in zip(params, buffers):
    p.requires_grad = False
    buf.mul_(momentum).add_(p.grad + weight_decay * p)
    p -= lr * buf
    p.grad = None
"""), {"still leaves"}),
    "gradients zeroed, not set to None": (step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        buf.mul_(momentum).add_(p.grad + weight_decay * p)
        p -= lr * buf
        p.grad.zero_()
"""), {"grads cleared"}),
    "weight decay outside the buffer": (step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        buf.mul_(momentum).add_(p.grad)
        p -= lr * (buf + weight_decay * p)
        p.grad = None
"""), {"momentum buffers", "several steps"}),
    "the buffer's old value ignored": (step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        buf.copy_(p.grad + weight_decay * p)
        p -= lr * buf
        p.grad = None
"""), {"values", "momentum buffers"}),
}

SAYS = {
    ".data update": ("`.data`", "grad_fn"),
    "gradients zeroed, not set to None": ("`p.grad = None`",),
}

# A step that assumes contiguous tensors: `view(-1)` fails on a transposed or strided parameter.
WRONG["flattened with view"] = (step("""
with torch.no_grad():
    for p, buf in zip(params, buffers):
        flat, flat_buf = p.view(-1), buf.view(-1)
        flat_buf.mul_(momentum).add_(p.grad.view(-1) + weight_decay * flat)
        flat.sub_(lr * flat_buf)
        p.grad = None
"""), {"values"})

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = (step("""
# TODO: your fix goes here (see the task above).
pass
"""), {c.name for c in EXERCISE.checks})
