"""Reference of exercise 3, sliced_input: the second pass reads new tensors; nothing is written.

The first pass saves its input (embedding keeps the token indices, `mul` keeps the mask), so the
predicted label's tokens are not written into `tokens[:, -3:]`: `torch.cat` builds the second pass's
tokens and mask, read by the same encoder, and the caller's tensors stay as they were.
"""

from __future__ import annotations

import torch

from autograder.exercises.sliced_input import LABEL_LEN, TwoStageClassifierLayout


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
