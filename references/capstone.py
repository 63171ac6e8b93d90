"""Reference of the capstone: the training script as it should have been, and what each in-place write did.

The given script divides the output of `exp` in place (`p /= p.sum(...)`), which exp saved for backward, so
backward raises; and it normalises the features through `.data` (`h.data /= h.data.norm(...)`), which
raises nothing but hides the division from autograd, so every gradient before it is wrong. The reference
does both out of place; everything else is the script's, the harmless in-place operations included: the
shift of the logits by their maximum (the product that made them saved its inputs, not its output) and the
clamp of the temperature after the optimizer's step (outside any graph; written here under `no_grad`, which
the script's `.data` equals).
"""

from __future__ import annotations

import torch
from torch import nn

from autograder.exercises.capstone import EXERCISE, NetLayout

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4
MAX_GRAD_NORM = 1.0
ENTROPY_WEIGHT = 0.1
SCALE_RANGE = (1.0, 30.0)


class Net(NetLayout):
    """tanh(LayerNorm(inp(x))), gated by sigmoid(gate(.)), scaled to unit length, times `scale * head`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.norm(self.inp(x)))
        h = h * torch.sigmoid(self.gate(h))
        h = h / h.norm(dim=1, keepdim=True)
        return self.scale * self.head(h)


def softmax(logits: torch.Tensor) -> torch.Tensor:
    logits -= logits.max(dim=1, keepdim=True).values  # harmless: the product that made logits saved its inputs
    p = logits.exp()
    return p / p.sum(dim=1, keepdim=True)


def loss_fn(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy minus ENTROPY_WEIGHT times the entropy of the predictions."""
    probs = softmax(logits)
    log_probs = probs.log()
    nll = -log_probs[torch.arange(len(y)), y].mean()
    entropy = -(probs * log_probs).sum(dim=1).mean()
    return nll - ENTROPY_WEIGHT * entropy


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    optimizer.step()
    with torch.no_grad():
        model.scale.clamp_(*SCALE_RANGE)
    return loss.item()


def in_place_writes() -> dict[str, str]:
    """Each in-place write of the given script, as it writes it: what it does."""
    return {
        "x -= x.mean(dim=0)": "harmless",  # data: nothing requires grad
        "x /= x.std(dim=0)": "harmless",
        "h.data /= h.data.norm(dim=1, keepdim=True)": "silently wrong",  # the division hidden from autograd
        "logits -= logits.max(dim=1, keepdim=True).values": "harmless",  # the product saved its inputs
        "p /= p.sum(dim=1, keepdim=True)": "raises",  # exp saved its output
        "model.scale.data.clamp_(*SCALE_RANGE)": "harmless",  # after the step, outside any graph
    }


REFERENCE = {"Net": Net, "loss_fn": loss_fn, "make_optimizer": make_optimizer, "train_step": train_step,
             "in_place_writes": in_place_writes}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

SCRIPT = '''"""Train a small classifier on synthetic clusters: a gated MLP with a cosine head, a loss with a
confidence penalty, SGD with momentum and gradient clipping."""

import torch
from torch import nn

DIM, HIDDEN, CLASSES = 8, 32, 4
LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4
MAX_GRAD_NORM = 1.0
ENTROPY_WEIGHT = 0.1  # the confidence penalty: reward a little uncertainty
SCALE_RANGE = (1.0, 30.0)  # where the cosine head's temperature may go


# ---- data ---------------------------------------------------------------------------------
def make_data(n, generator):
    """Points scattered around one random centre per class, standardised."""
    centres = 2.0 * torch.randn(CLASSES, DIM, generator=generator)
    y = torch.randint(0, CLASSES, (n,), generator=generator)
    x = centres[y] + torch.randn(n, DIM, generator=generator)
    x -= x.mean(dim=0)
    x /= x.std(dim=0)
    return x, y


# ---- model --------------------------------------------------------------------------------
class Net(nn.Module):
    """A gated hidden layer, then a cosine classifier: unit-length features against the head's rows."""

    def __init__(self, dim, hidden, classes):
        super().__init__()
        self.inp = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.gate = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes, bias=False)
        self.scale = nn.Parameter(torch.tensor(5.0))

    def forward(self, x):
        h = torch.tanh(self.norm(self.inp(x)))
        h = h * torch.sigmoid(self.gate(h))
        h.data /= h.data.norm(dim=1, keepdim=True)
        return self.scale * self.head(h)


# ---- loss ---------------------------------------------------------------------------------
def softmax(logits):
    """Row-wise softmax, shifted by each row's maximum so that exp cannot overflow."""
    logits -= logits.max(dim=1, keepdim=True).values
    p = logits.exp()
    p /= p.sum(dim=1, keepdim=True)
    return p


def loss_fn(logits, y):
    """Cross-entropy minus a little entropy: a confidence penalty (Pereyra et al., 2017)."""
    probs = softmax(logits)
    log_probs = probs.log()
    nll = -log_probs[torch.arange(len(y)), y].mean()
    entropy = -(probs * log_probs).sum(dim=1).mean()
    return nll - ENTROPY_WEIGHT * entropy


# ---- training -----------------------------------------------------------------------------
def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)


def train_step(model, optimizer, x, y):
    """One step on one batch; returns the batch's loss."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    optimizer.step()
    model.scale.data.clamp_(*SCALE_RANGE)
    return loss.item()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def train(steps=100, batch=64, seed=0, log_every=25):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x, y = make_data(2048, g)
    x_val, y_val, x_train, y_train = x[:512], y[:512], x[512:], y[512:]
    model = Net(DIM, HIDDEN, CLASSES)
    optimizer = make_optimizer(model)
    running = 0.0
    for step in range(1, steps + 1):
        idx = torch.randint(0, len(x_train), (batch,), generator=g)
        running += train_step(model, optimizer, x_train[idx], y_train[idx])
        if step % log_every == 0:
            print(f"step {step:4d}  loss {running / log_every:.3f}  "
                  f"val accuracy {accuracy(model, x_val, y_val):.2f}")
            running = 0.0
    return model


if __name__ == "__main__":
    train()
'''
"""The script as the learner gets it: the notebook's `%%writefile` cell holds exactly this
(tests/exercises/test_capstone.py checks)."""

EXP = "    p = logits.exp()\n"
RAISES = "    p /= p.sum(dim=1, keepdim=True)\n"
SILENT = "        h.data /= h.data.norm(dim=1, keepdim=True)\n"
SHIFT = "    logits -= logits.max(dim=1, keepdim=True).values\n"
CLAMP = "    model.scale.data.clamp_(*SCALE_RANGE)\n"
"""The two bugs, and the two decoys: an in-place op that is harmless (the product that made `logits` saved
its inputs, not its output) and a `.data` write that is harmless (a projection after the optimizer's step,
outside any graph)."""


WRITES = in_place_writes()


def named(**changed: str) -> str:
    """`in_place_writes()`, returning the reference's classification with these entries changed (a verdict for a
    line; the verdict "" leaves the line out)."""
    entries = {**WRITES, **changed}
    body = "".join(f"        {line!r}: {verdict!r},\n" for line, verdict in entries.items() if verdict)
    return f"\n\ndef in_place_writes():\n    return {{\n{body}    }}\n"


def script(*edits: tuple[str, str], lines: str | None = None) -> str:
    """The given script with each (old, new) made (old found exactly once), then the named lines."""
    text = SCRIPT
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"not exactly once in the script: {old!r}")
        text = text.replace(old, new)
    return text + (named() if lines is None else lines)


FIX_RAISES = (RAISES, "    p = p / p.sum(dim=1, keepdim=True)\n")
FIX_SILENT = (SILENT, "        h = h / h.norm(dim=1, keepdim=True)\n")
WITH_F = ("from torch import nn\n", "from torch import nn\nimport torch.nn.functional as F\n")

BROKEN = SCRIPT

CORRECT = {
    "both out of place": script(FIX_RAISES, FIX_SILENT),
    "torch.softmax and F.normalize": script(WITH_F, (SHIFT + EXP + RAISES + "    return p\n",
                                                     "    return torch.softmax(logits, dim=1)\n"),
                                            (SILENT, "        h = F.normalize(h, dim=1)\n")),
    "clone of exp's output, linalg norm": script(
        (EXP, "    p = logits.exp().clone()  # exp saved its output: divide a copy\n"),
        (SILENT, "        h = h / torch.linalg.vector_norm(h, dim=1, keepdim=True)\n")),
    "log_softmax, clamp under no_grad": script(
        ("    probs = softmax(logits)\n    log_probs = probs.log()\n",
         "    log_probs = torch.log_softmax(logits, dim=1)\n    probs = log_probs.exp()\n"),
        FIX_SILENT,
        (CLAMP, "    with torch.no_grad():\n        model.scale.clamp_(*SCALE_RANGE)\n")),
    "lines named loosely": script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "p /= p.sum(dim=1, keepdim=True)": "", "    p/=p.sum(dim=1,keepdim=True)   # exp saved p": " Raises",
        "h.data /= h.data.norm(dim=1, keepdim=True)": "",
        "h.data /= h.data.norm(dim = 1, keepdim = True)": "SILENTLY  wrong"})),
}

WRONG = {
    # name: (code, the checks that must fail)
    "only the raising line fixed": (script(FIX_RAISES), {"one step", "three steps", "gradcheck"}),
    "the division through .data": (script((RAISES, "    p.data /= p.data.sum(dim=1, keepdim=True)\n"), FIX_SILENT),
                                   {"one step", "three steps", "gradcheck"}),
    "the division under no_grad": (script((RAISES, "    with torch.no_grad():\n"
                                                   "        p /= p.sum(dim=1, keepdim=True)\n"),
                                          FIX_SILENT), "trains"),
    "the shift made out of place instead": (script(
        (SHIFT, "    logits = logits - logits.max(dim=1, keepdim=True).values\n"), FIX_SILENT), "trains"),
    "the sum detached": (script((RAISES, "    p = p / p.sum(dim=1, keepdim=True).detach()\n"), FIX_SILENT),
                         {"one step", "gradcheck"}),
    "the norm detached": (script(FIX_RAISES, (SILENT, "        h = h / h.norm(dim=1, keepdim=True).detach()\n")),
                          {"one step", "gradcheck"}),
    "the normalisation deleted": (script(FIX_RAISES, (SILENT, "")), {"one step", "three steps"}),
    "a new Parameter for the clamp": (script(FIX_RAISES, FIX_SILENT, (CLAMP, (
        "    model.scale = nn.Parameter(model.scale.detach().clamp(*SCALE_RANGE))\n"))), "three steps"),
    # A safeguard removed: the shift by the maximum deleted with the in-place write (the raising line fixed).
    "the max shift deleted": (script((SHIFT, ""), FIX_RAISES, FIX_SILENT), "large logits"),
    # The clamp deleted: it never acts while the temperature stays in its range, as the public batches keep it.
    "the clamp deleted": (script(FIX_RAISES, FIX_SILENT, (CLAMP, "")), "one step"),
    # An index made for the first batch and kept: the next batch of another size breaks it.
    "an index kept from the first batch": (script(FIX_RAISES, FIX_SILENT, (
        "    nll = -log_probs[torch.arange(len(y)), y].mean()\n",
        "    if not ROWS:\n        ROWS.append(torch.arange(len(y)))\n    nll = -log_probs[ROWS[0], y].mean()\n"),
        ("def loss_fn(logits, y):\n", "ROWS = []\n\n\ndef loss_fn(logits, y):\n")), "trains"),
    "the bugs swapped": (script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "h.data /= h.data.norm(dim=1, keepdim=True)": "raises", "p /= p.sum(dim=1, keepdim=True)": "silently wrong"})),
        "the two bugs"),
    "the saving line called raising": (script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "p = logits.exp()": "raises", "p /= p.sum(dim=1, keepdim=True)": "harmless"})), "the two bugs"),
    "the harmless .data called silently wrong": (script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "model.scale.data.clamp_(*SCALE_RANGE)": "silently wrong"})), {"the two bugs", "the harmless writes"}),
    "the in-place shift called raising": (script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "logits -= logits.max(dim=1, keepdim=True).values": "raises"})), {"the two bugs", "the harmless writes"}),
    "a harmless write left out": (script(FIX_RAISES, FIX_SILENT, lines=named(**{"x /= x.std(dim=0)": ""})),
                                  "the harmless writes"),
    "the fixed lines named": (script(FIX_RAISES, FIX_SILENT, lines=named(**{
        "p /= p.sum(dim=1, keepdim=True)": "", "h.data /= h.data.norm(dim=1, keepdim=True)": "",
        "p = p / p.sum(dim=1, keepdim=True)": "raises", "h = h / h.norm(dim=1, keepdim=True)": "silently wrong"})),
        "the two bugs"),
    "line numbers": (script(FIX_RAISES, FIX_SILENT, lines="\n\ndef in_place_writes():\n    return {49: 'raises', "
                            "40: 'silently wrong'}\n"), {"the two bugs", "the harmless writes"}),
    "another word": (script(FIX_RAISES, FIX_SILENT, lines=named(**{"p /= p.sum(dim=1, keepdim=True)": "crashes"})),
                     {"the two bugs", "the harmless writes"}),
}

SAYS = {
    "only the raising line fixed": ("a gradient is wrong, and nothing raised", "gradcheck"),
    "the shift made out of place instead": ("p /= p.sum(dim=1, keepdim=True)",),
    "the normalisation deleted": ("computes something else than the script",),
    "the saving line called raising": ("anomaly mode",),
    "the fixed lines named": ("before your fix",),
    "line numbers": ("not a line of code",),
    "another word": ("not \"raises\", \"harmless\" or \"silently wrong\"",),
}

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
# The script's step moved: the same values while gradients start empty, not when the model arrives with some
# (the scenario "gradients at entry"). And its clipping deleted, which acts on the grader's batches.
WRONG["zero_grad moved after the step"] = (script(FIX_RAISES, FIX_SILENT, (
    "    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n", "    loss = loss_fn(model(x), y)\n"), (
    "    optimizer.step()\n    model.scale", "    optimizer.step()\n    optimizer.zero_grad()\n    model.scale")),
    {"one step"})
WRONG["the clipping deleted"] = (script(FIX_RAISES, FIX_SILENT, (
    "    nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)\n    optimizer.step()",
    "    optimizer.step()")), {"one step"})

WRONG["starter without the raise"] = ('''RAISES, HARMLESS, SILENTLY_WRONG = "raises", "harmless", "silently wrong"


def in_place_writes():
    """Each in-place write of the given script, as the script writes it: RAISES, HARMLESS or SILENTLY_WRONG."""
    # TODO: your fix goes here (see the task above).
    pass


import torch
from torch import nn

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4
MAX_GRAD_NORM = 1.0
ENTROPY_WEIGHT = 0.1  # the confidence penalty: reward a little uncertainty
SCALE_RANGE = (1.0, 30.0)  # where the cosine head's temperature may go


class Net(nn.Module):
    """A gated hidden layer, then a cosine classifier: unit-length features against the head's rows."""

    def __init__(self, dim, hidden, classes):
        # TODO: your fix goes here (see the task above).
        pass

    def forward(self, x):
        # TODO: your fix goes here (see the task above).
        pass


def softmax(logits):
    """Row-wise softmax, shifted by each row's maximum so that exp cannot overflow."""
    # TODO: your fix goes here (see the task above).
    pass


def loss_fn(logits, y):
    """Cross-entropy minus a little entropy: a confidence penalty (Pereyra et al., 2017)."""
    # TODO: your fix goes here (see the task above).
    pass


def make_optimizer(model):
    # TODO: your fix goes here (see the task above).
    pass


def train_step(model, optimizer, x, y):
    """One step on one batch; returns the batch's loss."""
    # TODO: your fix goes here (see the task above).
    pass
''', {c.name for c in EXERCISE.checks})
