"""Reference of exercise 4, rnn_hidden: truncated BPTT, one optimizer step per chunk.

The state carried into the next chunk is detached: it keeps its values but not the previous chunk's
graph, whose saved weights `optimizer.step()` has since changed in place. Losses come back as Python
floats, so no chunk's graph is kept alive.
"""

from __future__ import annotations

import torch


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
