"""Reference of rnn_hidden: truncated BPTT, one optimizer step per chunk.

The state carried into the next chunk is detached: it keeps its values but not the previous chunk's
graph, whose saved weights `optimizer.step()` has since changed in place. Losses come back as Python
floats, so no chunk's graph is kept alive.
"""

from __future__ import annotations

import torch

from autograder.exercises.rnn_hidden import EXERCISE


def _detach(state):
    """A tensor (RNN, GRU) or a tuple (h, c) (LSTM), without its history."""
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(s.detach() for s in state)


def train_tbptt(model, chunks, targets, state0, optimizer, loss_fn):
    """For each chunk: zero_grad, forward from the carried state, backward, step; carry the state detached."""
    losses = []
    state = state0
    for chunk, target in zip(chunks, targets):
        optimizer.zero_grad()
        output, state = model(chunk, state)
        loss = loss_fn(output, target)
        loss.backward()
        optimizer.step()
        state = _detach(state)
        losses.append(loss.item())
    return losses


REFERENCE = {"train_tbptt": train_tbptt}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import torch
from torch import nn

def train_tbptt(model, chunks, targets, state0, optimizer, loss_fn):
"""


def loop(body: str, helpers: str = "") -> str:
    return helpers + HEADER + "".join(f"    {line}\n" for line in body.strip().splitlines())


# The seed's loop (seed 003), with the spec's names.
BROKEN = loop("""
losses = []
h_cur = state0
for chunk, target in zip(chunks, targets):
    optimizer.zero_grad()
    output, h_next = model(chunk, h_cur)
    loss = loss_fn(output, target)
    loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(loss.item())
    h_cur = h_next
return losses
""")


def carry(code: str) -> str:
    """The broken loop with `h_cur = h_next` replaced by `code` (indented as the loop body), no retain_graph."""
    body = "\n".join(f"        {line}" for line in code.strip("\n").splitlines())
    return BROKEN.replace("loss.backward(retain_graph=True)", "loss.backward()").replace(
        "        h_cur = h_next\n", body + "\n")


DETACH = """
def detach(state):
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(s.detach() for s in state)
"""

CORRECT = {
    "detach helper": DETACH + carry("h_cur = detach(h_next)"),
    "detach helper, retain_graph kept": DETACH + BROKEN.replace("h_cur = h_next\n", "h_cur = detach(h_next)\n"),
    "tuple only for lstm": carry("""if isinstance(model, nn.LSTM):
    h, c = h_next
    h_cur = (h.detach(), c.detach())
else:
    h_cur = h_next.detach()"""),
    ".data": carry("h_cur = h_next.data if torch.is_tensor(h_next) else tuple(s.data for s in h_next)"),
    "no_grad clone": carry("""with torch.no_grad():
    h_cur = h_next.clone() if torch.is_tensor(h_next) else tuple(s.clone() for s in h_next)"""),
    "pytree tree_map": carry("h_cur = torch.utils._pytree.tree_map(torch.Tensor.detach, h_next)"),
    "detach going in, model.zero_grad, float()": DETACH + loop("""
losses = []
state = state0
for x, y in zip(chunks, targets):
    model.zero_grad()
    out, state = model(x, detach(state))
    loss = loss_fn(out, y)
    loss.backward()
    optimizer.step()
    losses.append(float(loss))
return losses
"""),
    "detached leaf that requires grad": DETACH + carry(
        "h_cur = tuple(s.requires_grad_() for s in detach(h_next)) if isinstance(h_next, tuple) "
        "else detach(h_next).requires_grad_()"),
}

WRONG = {
    # name: (code, a check that must fail)
    "clone keeps the history (the seed's other suggestion)": (
        BROKEN.replace("h_cur = h_next\n", "h_cur = h_next.clone() if torch.is_tensor(h_next) "
                       "else tuple(s.clone() for s in h_next)\n"), "truncated"),
    "no_grad around the rebinding": (BROKEN.replace(
        "h_cur = h_next\n", "with torch.no_grad():\n            h_cur = h_next\n"), "runs"),
    "allow_mutation_on_saved_tensors silences the error": (loop("""
losses = []
h_cur = state0
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    for chunk, target in zip(chunks, targets):
        optimizer.zero_grad()
        output, h_cur = model(chunk, h_cur)
        loss = loss_fn(output, target)
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss.item())
return losses
"""), "truncated"),
    "resets the state to state0": (carry("h_cur = state0"), "carries state"),
    "no state: starts from zeros every chunk": (carry("pass").replace("model(chunk, h_cur)", "model(chunk)"),
                                                "carries state"),
    ".detach() breaks on the LSTM tuple": (carry("h_cur = h_next.detach()"), "lstm"),
    "detaches h but not c": (carry("""if isinstance(h_next, tuple):
    h_cur = (h_next[0].detach(), h_next[1])
else:
    h_cur = h_next.detach()"""), "truncated"),
    "forgets zero_grad": (DETACH + carry("h_cur = detach(h_next)").replace("optimizer.zero_grad()", "pass"),
                          "final weights"),
    "steps before backward": (DETACH + carry("h_cur = detach(h_next)").replace(
        "    loss.backward()\n        optimizer.step()", "    optimizer.step()\n        loss.backward()"),
        "final weights"),
    "steps once, after the last chunk": (DETACH + carry("h_cur = detach(h_next)").replace(
        "        optimizer.step()\n", "").replace("    return losses", "    optimizer.step()\n    return losses"),
        "final weights"),
    # Contrived, but the numbers are all right: only the graph size can tell.
    "right numbers, but each chunk's graph links to the last": (DETACH + loop("""
losses, state, previous = [], state0, None
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    for chunk, target in zip(chunks, targets):
        optimizer.zero_grad()
        if previous is not None:
            chunk = chunk + 0 * previous.sum()
        output, state = model(chunk, state)
        loss = loss_fn(output, target)
        loss.backward(retain_graph=True)
        optimizer.step()
        state, previous = detach(state), loss
        losses.append(loss.item())
return losses
"""), "truncated"),
    "returns the loss tensors": (DETACH + carry("h_cur = detach(h_next)").replace("loss.item()", "loss"),
                                 "losses"),
    "copies the new state into state0": (carry("""with torch.no_grad():
    for old, new in zip(h_cur if isinstance(h_cur, tuple) else (h_cur,),
                        h_next if isinstance(h_next, tuple) else (h_next,)):
        old.copy_(new)"""), "caller's tensors unchanged"),
}

SAYS = {
    # name: what the failed check's message must say
    "returns the loss tensors": ("loss.item()", "graph"),
    "allow_mutation_on_saved_tensors silences the error": ("history", "earlier chunks"),
    "right numbers, but each chunk's graph links to the last": ("grows",),
    "detaches h but not c": ("history",),
    "no state: starts from zeros every chunk": ("missing", "zeros"),
    "resets the state to state0": ("final h of chunk 1",),
}

# The chunks stacked into one tensor first: a data loader's shorter last chunk cannot be stacked.
WRONG["chunks stacked first"] = (DETACH + loop("""
losses = []
state = state0
for chunk, target in zip(torch.stack(chunks), torch.stack(targets)):
    optimizer.zero_grad()
    output, state = model(chunk, state)
    loss = loss_fn(output, target)
    loss.backward()
    optimizer.step()
    state = detach(state)
    losses.append(loss.item())
return losses
"""), "runs")

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
# Steps the contract does not list, or lists in another order, that change nothing where the gradients are
# small and start empty: the scenario "gradients at entry, large targets" hands the model gradients left by the
# caller's own backward, and targets large enough that clipping acts.
FIXED = DETACH + carry("h_cur = detach(h_next)")
WRONG["zero_grad after the step, not before the backward"] = (
    FIXED.replace("        optimizer.zero_grad()\n", "").replace(
        "        optimizer.step()\n", "        optimizer.step()\n        optimizer.zero_grad()\n"), {"final weights"})
WRONG["gradients clipped before the step"] = (FIXED.replace(
    "        optimizer.step()\n",
    "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n        optimizer.step()\n"), {"final weights"})

WRONG["starter without the raise"] = ("""import torch


def train_tbptt(model, chunks, targets, state0, optimizer, loss_fn):
    losses = []
    state = state0
    for chunk, target in zip(chunks, targets):
        optimizer.zero_grad()
        output, state = model(chunk, state)
        loss = loss_fn(output, target)
        # TODO: your fix goes here (see the task above).
        pass
        losses.append(loss.item())
    return losses
""", {c.name for c in EXERCISE.checks})
