"""Reference of sliced_input: the second pass reads new tensors; nothing is written.

The first pass saves its input (embedding keeps the token indices, `mul` keeps the mask), so the
predicted label's tokens are not written into `tokens[:, -3:]`: `torch.cat` builds the second pass's
tokens and mask, read by the same encoder, and the caller's tensors stay as they were.
"""

from __future__ import annotations

import torch

from autograder.exercises.sliced_input import EXERCISE, LABEL_LEN, TwoStageClassifierLayout


class TwoStageClassifier(TwoStageClassifierLayout):
    """logits_a = fc_a(pool(tokens, mask)); logits_b = fc_b(pool(tokens2, mask2)), where tokens2 has its
    last 3 tokens replaced by label_tokens[logits_a.argmax(1)] and mask2 has them set to 1."""

    def pool(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (self.embed(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits_a = self.fc_a(self.pool(tokens, mask))
        labels = self.label_tokens[logits_a.argmax(1)]
        tokens2 = torch.cat([tokens[:, :-LABEL_LEN], labels], dim=1)
        mask2 = torch.cat([mask[:, :-LABEL_LEN], torch.ones_like(mask[:, -LABEL_LEN:])], dim=1)
        return logits_a, self.fc_b(self.pool(tokens2, mask2))


REFERENCE = {"TwoStageClassifier": TwoStageClassifier}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import copy

import torch
from torch import nn

class TwoStageClassifier(nn.Module):
    def __init__(self, vocab_size, dim, num_a, num_b, label_tokens):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.fc_a = nn.Linear(dim, num_a)
        self.fc_b = nn.Linear(dim, num_b)
        self.register_buffer("label_tokens", label_tokens)

    def pool(self, tokens, mask):
        return (self.embed(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)

    def forward(self, tokens, mask):
"""


def model(body: str, header: str = HEADER) -> str:
    return header + "".join(f"        {line}\n" for line in body.strip().splitlines())


FIRST = """
logits_a = self.fc_a(self.pool(tokens, mask))
labels = self.label_tokens[logits_a.argmax(1)]
"""
LAST = "\nreturn logits_a, self.fc_b(self.pool(tokens, mask))"

BROKEN = model(FIRST + """
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST)

CORRECT = {
    "clone both then write": model(FIRST + """
tokens = tokens.clone()
mask = mask.clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST),
    "torch.cat": model(FIRST + """
tokens = torch.cat([tokens[:, :-3], labels], dim=1)
mask = torch.cat([mask[:, :-3], mask.new_ones(mask.shape[0], 3)], dim=1)
""" + LAST),
    "torch.where with a position mask": model(FIRST + """
last = torch.arange(tokens.shape[1], device=tokens.device) >= tokens.shape[1] - 3
padded = torch.cat([torch.zeros_like(tokens[:, :-3]), labels], dim=1)
tokens = torch.where(last, padded, tokens)
mask = torch.where(last, torch.ones_like(mask), mask)
""" + LAST),
    "index_put on clones": model(FIRST + """
cols = torch.arange(tokens.shape[1] - 3, tokens.shape[1], device=tokens.device)
rows = torch.arange(tokens.shape[0], device=tokens.device)[:, None]
tokens = tokens.clone().index_put((rows, cols), labels)
mask = mask.clone().index_put((rows, cols), torch.ones_like(labels, dtype=mask.dtype))
""" + LAST),
    "deepcopy of the inputs, same encoder (the seed's copy without bert_A)": model(FIRST + """
tokens = copy.deepcopy(tokens)
mask = copy.deepcopy(mask)
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST),
    "substitute at the embedding level": model("""
emb = self.embed(tokens)
logits_a = self.fc_a((emb * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
emb = emb.clone()
emb[:, -3:] = self.embed(self.label_tokens[logits_a.argmax(1)])
mask = torch.cat([mask[:, :-3], torch.ones_like(mask[:, -3:])], dim=1)
return logits_a, self.fc_b((emb * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
"""),
}

SECOND_ENCODER = HEADER.replace(
    'self.register_buffer("label_tokens", label_tokens)',
    'self.register_buffer("label_tokens", label_tokens)\n        self.embed_b = nn.Embedding(vocab_size, dim)',
)

WRONG = {
    # name: (code, a check that must fail)
    ".data writes": (model(FIRST + """
tokens.data[:, -3:] = labels
mask.data[:, -3:] = 1
""" + LAST), "gradients"),
    ".data writes change the caller": (model(FIRST + """
tokens.data[:, -3:] = labels
mask.data[:, -3:] = 1
""" + LAST), "caller's tensors unchanged"),
    "the seed's fix: copies and a second encoder": (model(FIRST + """
tokens = copy.deepcopy(tokens)
mask = copy.deepcopy(mask)
tokens[:, -3:] = labels
mask[:, -3:] = 1
logits_b = self.fc_b((self.embed_b(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
return logits_a, logits_b
""", SECOND_ENCODER), "one encoder"),
    "deepcopy of embed inside forward": (model(FIRST + """
tokens = tokens.clone()
mask = mask.clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
embed_b = copy.deepcopy(self.embed)
return logits_a, self.fc_b((embed_b(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
"""), "gradients"),
    "deepcopy of embed registered in forward": (model(FIRST + """
tokens = tokens.clone()
mask = mask.clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
self.embed_b = copy.deepcopy(self.embed)
return logits_a, self.fc_b((self.embed_b(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))
"""), "one encoder"),
    "first pass without grad": (model("""
with torch.no_grad():
    logits_a = self.fc_a(self.pool(tokens, mask))
labels = self.label_tokens[logits_a.argmax(1)]
tokens = tokens.clone()
mask = mask.clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST), "gradients"),
    "detach() is not a copy": (model(FIRST + """
tokens = tokens.detach()
mask = mask.detach()
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST), "backward runs"),
    "clones tokens, writes the mask in place": (model(FIRST + """
tokens = tokens.clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST), "backward runs"),
    "no_grad around the writes": (model(FIRST + """
with torch.no_grad():
    tokens[:, -3:] = labels
    mask[:, -3:] = 1
""" + LAST), "backward runs"),
    "writes the labels into the first positions": (model(FIRST + """
tokens = tokens.clone()
mask = mask.clone()
tokens[:, :3] = labels
mask[:, :3] = 1
""" + LAST), "forward"),
    "forgets the mask": (model(FIRST + """
tokens = tokens.clone()
tokens[:, -3:] = labels
""" + LAST), "forward"),
    "appends instead of replacing": (model(FIRST + """
tokens = torch.cat([tokens, labels], dim=1)
mask = torch.cat([mask, torch.ones_like(mask[:, :3])], dim=1)
""" + LAST), "forward"),
    "restores the caller's tensors afterwards": (model(FIRST + """
old_tokens, old_mask = tokens[:, -3:].clone(), mask[:, -3:].clone()
tokens[:, -3:] = labels
mask[:, -3:] = 1
logits_b = self.fc_b(self.pool(tokens, mask))
tokens[:, -3:] = old_tokens
mask[:, -3:] = old_mask
return logits_a, logits_b
"""), "backward runs"),
    "allow_mutation_on_saved_tensors in forward": (model("""
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    logits_a = self.fc_a(self.pool(tokens, mask))
    tokens[:, -3:] = self.label_tokens[logits_a.argmax(1)]
    mask[:, -3:] = 1
    return logits_a, self.fc_b(self.pool(tokens, mask))
"""), "backward runs"),
    "label of the first row for all rows": (model(FIRST + """
tokens = tokens.clone()
mask = mask.clone()
tokens[:, -3:] = labels[0]
mask[:, -3:] = 1
""" + LAST), "forward"),
    "label_tokens not a buffer": (model(FIRST + """
tokens = torch.cat([tokens[:, :-3], labels], dim=1)
mask = torch.cat([mask[:, :-3], torch.ones_like(mask[:, -3:])], dim=1)
""" + LAST, HEADER.replace('self.register_buffer("label_tokens", label_tokens)',
                           "self.label_tokens = label_tokens")), "one encoder"),
}

# Copies made through flat views: view() refuses the strided tokens and mask of a longer batch.
WRONG["copies through flat views"] = (model(FIRST + """
tokens = tokens.view(-1).clone().view(tokens.shape)
mask = mask.view(-1).clone().view(mask.shape)
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST), "forward")
CORRECT["copies through flat reshapes"] = model(FIRST + """
tokens = tokens.reshape(-1).clone().reshape(tokens.shape)
mask = mask.reshape(-1).clone().reshape(mask.shape)
tokens[:, -3:] = labels
mask[:, -3:] = 1
""" + LAST)

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = ("""import torch
from torch import nn


class TwoStageClassifier(nn.Module):
    def __init__(self, vocab_size, dim, num_a, num_b, label_tokens):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.fc_a = nn.Linear(dim, num_a)
        self.fc_b = nn.Linear(dim, num_b)
        self.register_buffer("label_tokens", label_tokens)

    def pool(self, tokens, mask):
        return (self.embed(tokens) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)

    def forward(self, tokens, mask):
        logits_a = self.fc_a(self.pool(tokens, mask))
        labels = self.label_tokens[logits_a.argmax(1)]
        # TODO: your fix goes here (see the task above).
        pass
        logits_b = self.fc_b(self.pool(tokens, mask))
        return logits_a, logits_b
""", {c.name for c in EXERCISE.checks})
