"""Reference of exercise 8, gan_step_order: one step of a non-saturating GAN, in the order of the PyTorch
DCGAN example.

1. D's step: `opt_D.zero_grad()`; d_loss = BCE-with-logits(D(real), 1) + BCE-with-logits(D(fake.detach()), 0),
   each a mean over the batch, with D as the call found it; `d_loss.backward()`; `opt_D.step()`.
2. G's step: `opt_G.zero_grad()`; g_loss = BCE-with-logits(D(fake), 1) on a fresh call of the *updated* D with
   the same `fake`; `g_loss.backward()`; `opt_G.step()`.

Returns (d_loss, g_loss) as Python floats. g_loss's backward also fills D's `.grad`, which the next call's
`opt_D.zero_grad()` clears before D's next backward: no step ever uses it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.exercises.gan_step_order import EXERCISE


def train_step(G, D, opt_G, opt_D, real, noise):
    """D's step on d_loss (fake detached), then G's step on g_loss through the updated D."""
    fake = G(noise)

    opt_D.zero_grad()
    d_real, d_fake = D(real), D(fake.detach())
    d_loss = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
              + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
    d_loss.backward()
    opt_D.step()

    opt_G.zero_grad()
    d_fake = D(fake)  # the updated D
    g_loss = F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
    g_loss.backward()
    opt_G.step()
    return d_loss.item(), g_loss.item()


REFERENCE = {"train_step": train_step}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import torch
import torch.nn.functional as F


def bce(logits, target):
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


def train_step(G, D, opt_G, opt_D, real, noise):
"""


def step(body: str, header: str = HEADER) -> str:
    return header + "".join(f"    {line}\n" if line else "\n" for line in body.strip().splitlines())


# The report's step: one D(fake) for both losses, D's step between the two backward passes.
BROKEN = step("""
opt_D.zero_grad()
opt_G.zero_grad()
fake = G(noise)
d_real, d_fake = D(real), D(fake)
d_loss = bce(d_real, 1.0) + bce(d_fake, 0.0)
g_loss = bce(d_fake, 1.0)
d_loss.backward(retain_graph=True)
opt_D.step()
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
""")

SOLUTION_ORDER = """
fake = G(noise)
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
d_loss.backward()
opt_D.step()
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""

CORRECT = {
    "the DCGAN example: two backward passes for D, modules' zero_grad": step("""
D.zero_grad()
fake = G(noise)
err_real = bce(D(real), 1.0)
err_real.backward()
err_fake = bce(D(fake.detach()), 0.0)
err_fake.backward()
opt_D.step()
G.zero_grad()
err_g = bce(D(fake), 1.0)
err_g.backward()
opt_G.step()
return (err_real + err_fake).item(), err_g.item()
"""),
    "the report's step, D run again after its step and G's grads zeroed": step("""
opt_D.zero_grad()
opt_G.zero_grad()
fake = G(noise)
d_real, d_fake = D(real), D(fake)
d_loss = bce(d_real, 1.0) + bce(d_fake, 0.0)
d_loss.backward(retain_graph=True)
opt_D.step()
opt_G.zero_grad()  # d_loss's backward reached G through the undetached fake
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""),
    "each backward kept to its own network with inputs=": step("""
fake = G(noise)
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake), 0.0)
d_loss.backward(inputs=list(D.parameters()))
opt_D.step()
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward(inputs=list(G.parameters()))
opt_G.step()
return d_loss.item(), g_loss.item()
"""),
    "D frozen during G's backward": step("""
fake = G(noise)
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
d_loss.backward()
opt_D.step()
for p in D.parameters():
    p.requires_grad_(False)
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
for p in D.parameters():
    p.requires_grad_(True)
return d_loss.item(), g_loss.item()
"""),
    "losses written with logsigmoid": step("""
fake = G(noise)
opt_D.zero_grad()
d_loss = -F.logsigmoid(D(real)).mean() - F.logsigmoid(-D(fake.detach())).mean()
d_loss.backward()
opt_D.step()
opt_G.zero_grad()
g_loss = -F.logsigmoid(D(fake)).mean()
g_loss.backward()
opt_G.step()
return float(d_loss), float(g_loss)
"""),
    "G run twice, without grad for D's step": step("""
with torch.no_grad():
    fake = G(noise)
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake), 0.0)
d_loss.backward()
opt_D.step()
opt_G.zero_grad()
g_loss = bce(D(G(noise)), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""),
    "G's gradients from torch.autograd.grad": step("""
fake = G(noise)
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
d_loss.backward()
opt_D.step()
g_loss = bce(D(fake), 1.0)
grads = torch.autograd.grad(g_loss, list(G.parameters()))
for p, g in zip(G.parameters(), grads):
    p.grad = g
opt_G.step()
return d_loss.item(), g_loss.item()
"""),
}

WRONG = {
    # name: (code, the checks that must fail)
    "D's step moved after G's backward": (BROKEN.replace(
        "    opt_D.step()\n    g_loss.backward()\n", "    g_loss.backward()\n    opt_D.step()\n"),
        {"D after step 1", "G after step 1", "losses"}),
    "G's gradient through the old D (backward kept to G, D's step after it)": (step("""
fake = G(noise)
opt_D.zero_grad()
opt_G.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
g_loss = bce(D(fake), 1.0)
d_loss.backward()
g_loss.backward(inputs=list(G.parameters()))
opt_D.step()
opt_G.step()
return d_loss.item(), g_loss.item()
"""), {"G after step 1", "losses"}),
    "G stepped first": (step("""
fake = G(noise)
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
d_loss.backward()
opt_D.step()
return d_loss.item(), g_loss.item()
"""), {"G after step 1", "losses"}),
    "D's grads never zeroed": (step("""
fake = G(noise)
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
d_loss.backward()
opt_D.step()
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""), {"two steps"}),
    "G's grads zeroed before d_loss's backward": (step("""
opt_D.zero_grad()
opt_G.zero_grad()
fake = G(noise)
d_loss = bce(D(real), 1.0) + bce(D(fake), 0.0)
d_loss.backward(retain_graph=True)
opt_D.step()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""), {"G after step 1"}),
    "fake detached for G's loss too": (step("""
fake = G(noise).detach()
opt_D.zero_grad()
d_loss = bce(D(real), 1.0) + bce(D(fake), 0.0)
d_loss.backward()
opt_D.step()
opt_G.zero_grad()
g_loss = bce(D(fake), 1.0)
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""), {"G after step 1", "two steps"}),
    "G's loss through D's weights' .data (no version check)": (step("""
opt_D.zero_grad()
opt_G.zero_grad()
fake = G(noise)
d_loss = bce(D(real), 1.0) + bce(D(fake.detach()), 0.0)
weights = {name: p.data for name, p in D.named_parameters()}  # .data: autograd does not see the step
g_loss = bce(torch.func.functional_call(D, weights, (fake,)), 1.0)
d_loss.backward()
opt_D.step()
g_loss.backward()
opt_G.step()
return d_loss.item(), g_loss.item()
"""), {"G after step 1", "losses"}),
    "the loss tensors returned": (step(SOLUTION_ORDER.replace("return d_loss.item(), g_loss.item()",
                                                               "return d_loss, g_loss")), {"losses"}),
    "retain_graph on both backward passes": (BROKEN.replace("    g_loss.backward()\n",
                                                             "    g_loss.backward(retain_graph=True)\n"), {"runs"}),
    "a clone of fake": (BROKEN.replace("D(fake)\n", "D(fake.clone())\n"), {"runs"}),
}

SAYS = {
    "D's step moved after G's backward": ("D's optimizer used gradients from g_loss too",),
    "G's gradient through the old D (backward kept to G, D's step after it)": ("through D before its update",),
    "G stepped first": ("G stepped before D",),
    "D's grads never zeroed": ("still held gradients from the previous call",),
    "G's grads zeroed before d_loss's backward": ("G's optimizer used d_loss's gradient too",),
    "fake detached for G's loss too": ("with no gradient",),
    "retain_graph on both backward passes": ("opt_D.step()",),
    "the loss tensors returned": ("keeps its step's whole graph alive",),
}

# Targets made once, for the first call's batch, and kept: the second call's batch of another size breaks them.
WRONG["targets made once, for the first batch"] = ("""import torch
import torch.nn.functional as F

TARGETS = {}


def train_step(G, D, opt_G, opt_D, real, noise):
    if not TARGETS:
        TARGETS["real"] = torch.ones(real.shape[0], 1, dtype=real.dtype)
        TARGETS["fake"] = torch.zeros(real.shape[0], 1, dtype=real.dtype)
    bce = F.binary_cross_entropy_with_logits
    fake = G(noise)
    opt_D.zero_grad()
    d_loss = bce(D(real), TARGETS["real"]) + bce(D(fake.detach()), TARGETS["fake"])
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    g_loss = bce(D(fake), TARGETS["real"])
    g_loss.backward()
    opt_G.step()
    return d_loss.item(), g_loss.item()
""", "runs")

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
# Each optimizer's gradients zeroed after its step, not before its backward: the same as long as the networks
# arrive with empty gradients; wrong when the caller's own backward left some (the scenario "gradients at entry").
WRONG["gradients zeroed after the steps, not before the backward passes"] = (step(
    SOLUTION_ORDER.replace("opt_D.zero_grad()\n", "").replace("opt_G.zero_grad()\n", "").replace(
        "return d_loss.item()", "opt_D.zero_grad()\nopt_G.zero_grad()\nreturn d_loss.item()")),
    {"D after step 1", "G after step 1"})

WRONG["starter without the raise"] = ('''import torch
import torch.nn.functional as F


def bce(logits, target):
    """Binary cross-entropy on D's logits, against a constant target (1.0: real, 0.0: fake), averaged."""
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


def train_step(G, D, opt_G, opt_D, real, noise):
    # TODO: your fix goes here (see the task above).
    pass
''', {c.name for c in EXERCISE.checks})
