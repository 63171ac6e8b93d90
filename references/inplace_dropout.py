"""Reference of exercise 2, inplace_dropout: the classifier head with dropout out of place.

`relu` saves its output for backward; `F.dropout(..., inplace=True)` would overwrite it, so dropout
writes a new tensor: fc(dropout(relu(proj(x)), p=drop_rate)), no dropout in eval mode.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.exercises.inplace_dropout import ClassifierHeadLayout


class ClassifierHead(ClassifierHeadLayout):
    """fc(dropout(relu(proj(x)))), dropout out of place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.proj(x))
        x = F.dropout(x, p=self.drop_rate, training=self.training)
        return self.fc(x)


REFERENCE = {"ClassifierHead": ClassifierHead}
