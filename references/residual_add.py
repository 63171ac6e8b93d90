"""Reference of exercise 1, residual_add: the intended math, out of place.

`relu` saves its output for backward, so the residual is added into a new tensor (`... + x`), never
into relu's output (`out += x`, the bug of the exercise).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.exercises.residual_add import ResidualBlockLayout


class ResidualBlock(ResidualBlockLayout):
    """relu(bn2(conv2(relu(bn1(conv1(x)))))) + x."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))) + x


REFERENCE = {"ResidualBlock": ResidualBlock}
