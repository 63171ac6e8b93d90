"""Reference of inplace_dropout: the classifier head with dropout out of place.

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


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

HEADER = """
import torch
import torch.nn.functional as F
from torch import nn

class ClassifierHead(nn.Module):
    def __init__(self, in_features, num_classes, drop_rate=0.2):
        super().__init__()
        self.drop_rate = drop_rate
        self.proj = nn.Linear(in_features, in_features)
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x):
"""


def head(body: str, header: str = HEADER) -> str:
    return header + "".join(f"        {line}\n" for line in body.strip().splitlines())


BROKEN = head("""
x = F.relu(self.proj(x))
x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)
return self.fc(x)
""")

DROPOUT_LINE = "x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)"


def fixed(line: str) -> str:
    return BROKEN.replace(DROPOUT_LINE, line)


CORRECT = {
    "inplace=False": fixed("x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=False)"),
    "nn.Dropout submodule": head("""
x = self.drop(F.relu(self.proj(x)))
return self.fc(x)
""", HEADER.replace("        self.fc =", "        self.drop = nn.Dropout(drop_rate)\n        self.fc =")),
    "hand-written bernoulli mask": fixed("""if self.training:
            mask = torch.bernoulli(torch.full_like(x, 1 - self.drop_rate))
            x = x * mask / (1 - self.drop_rate)"""),
    "own random stream, float mask": fixed("""if self.training:
            g = torch.Generator(device=x.device).manual_seed(7)
            keep = (torch.rand(x.shape, generator=g, device=x.device) >= self.drop_rate).float()
            x = x * keep / (1 - self.drop_rate)"""),
    "clone then in place": fixed(
        "x = F.dropout(x.clone(), p=self.drop_rate, training=self.training, inplace=True)"),
    "in-place dropout before the relu": head("""
x = F.dropout(self.proj(x), p=self.drop_rate, training=self.training, inplace=True)
return self.fc(F.relu(x))
"""),
}

WRONG = {
    # name: (code, a check that must fail)
    "bernoulli mask without rescale": (fixed("""if self.training:
            x = x * torch.bernoulli(torch.full_like(x, 1 - self.drop_rate))"""), "dropout"),
    "hard-coded p": (fixed("x = F.dropout(x, p=0.2, training=self.training)"), "dropout"),
    "p and 1-p swapped": (fixed("x = F.dropout(x, p=1 - self.drop_rate, training=self.training)"), "dropout"),
    "another default drop_rate": (fixed("x = F.dropout(x, p=self.drop_rate, training=self.training)").replace(
        "drop_rate=0.2", "drop_rate=0.5"), "dropout"),
    "dropout after fc": (head("""
x = F.relu(self.proj(x))
return F.dropout(self.fc(x), p=self.drop_rate, training=self.training)
"""), "dropout"),
    "always on": (fixed("x = F.dropout(x, p=self.drop_rate, training=True)"), "train and eval"),
    "in place on .data": (fixed(
        "F.dropout(x.data, p=self.drop_rate, training=self.training, inplace=True)"), "gradients"),
    "assigns .data": (fixed("x.data = F.dropout(x.data, p=self.drop_rate, training=self.training)"), "gradients"),
    "no_grad around the in-place dropout": (fixed("""with torch.no_grad():
            x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)"""), "backward runs"),
    "detach cuts the graph": (fixed("x = F.dropout(x.detach(), p=self.drop_rate, training=self.training)"),
                              "gradients"),
    "clone after the in-place dropout": (fixed(
        "x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True).clone()"), "backward runs"),
    "relu in place too": (BROKEN.replace("F.relu(self.proj(x))", "F.relu(self.proj(x), inplace=True)"),
                          "backward runs"),
    "gelu instead of relu": (BROKEN.replace("F.relu(", "F.gelu("), "dropout"),
}
