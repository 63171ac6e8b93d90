"""Reference of inplace_dropout: the classifier head, dropout and ReLU both in place, in an order autograd allows.

`relu` saves its output for backward, so nothing may write into it afterwards; a linear layer saves its input,
not its output. So dropout writes into `proj`'s output in place, before the ReLU, and the ReLU runs in place
after it: relu(dropout(h)) = dropout(relu(h)) for the same mask (the scale 1/(1-p) is positive), and no
tensor is allocated between `proj` and `fc`. No dropout in eval mode.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.exercises.inplace_dropout import EXERCISE, ClassifierHeadLayout


class ClassifierHead(ClassifierHeadLayout):
    """fc(relu(dropout(proj(x)))) = fc(dropout(relu(proj(x)))), both in place on proj's output."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.proj(x)
        x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)
        return self.fc(F.relu(x, inplace=True))


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


IN_PLACE_FIRST = head("""
x = self.proj(x)
x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)
x = F.relu(x, inplace=True)
return self.fc(x)
""")

CORRECT = {
    "in-place dropout before the in-place relu": IN_PLACE_FIRST,
    "modules, in place": head("""
return self.fc(self.relu(self.drop(self.proj(x))))
""", HEADER.replace("        self.fc =", "        self.drop = nn.Dropout(drop_rate, inplace=True)\n"
                    "        self.relu = nn.ReLU(inplace=True)\n        self.fc =")),
    "tensor methods: relu_ after dropout_": head("""
h = self.proj(x)
if self.training and self.drop_rate > 0:
    h.mul_(torch.bernoulli(torch.full_like(h, 1 - self.drop_rate))).div_(1 - self.drop_rate)
return self.fc(h.relu_())
"""),
}

WRONG = {
    # name: (code, a check that must fail)
    "inplace=False": (fixed("x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=False)"), "in place"),
    "nn.Dropout submodule, out of place": (head("""
x = self.drop(F.relu(self.proj(x)))
return self.fc(x)
""", HEADER.replace("        self.fc =", "        self.drop = nn.Dropout(drop_rate)\n        self.fc =")), "in place"),
    "clone then in place": (fixed(
        "x = F.dropout(x.clone(), p=self.drop_rate, training=self.training, inplace=True)"), "in place"),
    "bernoulli mask without rescale": (IN_PLACE_FIRST.replace(
        "x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)",
        """if self.training:
            x.mul_(torch.bernoulli(torch.full_like(x, 1 - self.drop_rate)))"""), "dropout"),
    "hard-coded p": (IN_PLACE_FIRST.replace("p=self.drop_rate", "p=0.2"), "dropout"),
    "p and 1-p swapped": (IN_PLACE_FIRST.replace("p=self.drop_rate", "p=1 - self.drop_rate"), "dropout"),
    "another default drop_rate": (IN_PLACE_FIRST.replace("drop_rate=0.2", "drop_rate=0.5"), "dropout"),
    "dropout after fc": (head("""
x = F.relu(self.proj(x), inplace=True)
return F.dropout(self.fc(x), p=self.drop_rate, training=self.training)
"""), "dropout"),
    "always on": (IN_PLACE_FIRST.replace("training=self.training", "training=True"), "train and eval"),
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
    "dropout in place on the caller's x": (head("""
x = F.dropout(x, p=self.drop_rate, training=self.training, inplace=True)
return self.fc(F.relu(self.proj(x), inplace=True))
"""), {"dropout", "caller's tensors unchanged"}),
    # Randomness that does not change between calls, and a mask kept for one batch size.
    "the same seed at every call": (IN_PLACE_FIRST.replace("x = self.proj(x)\n", "x = self.proj(x)\n"
                                                           "        torch.manual_seed(0)\n"), "dropout"),
    "a mask drawn once, in __init__": (head("""
h = self.proj(x)
if self.training:
    if not hasattr(self, "keep"):
        self.keep = torch.bernoulli(torch.full_like(h, 1 - self.drop_rate)) / (1 - self.drop_rate)
    h.mul_(self.keep)
return self.fc(h.relu_())
"""), "dropout"),
    # Dropout tied to whether gradients are recorded, not to the mode: Monte Carlo dropout (training mode under
    # torch.no_grad or torch.inference_mode) would not drop.
    "dropout only while gradients are recorded": (IN_PLACE_FIRST.replace(
        "training=self.training", "training=self.training and torch.is_grad_enabled()"), "dropout"),
    # The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
    "starter without the raise": ("""import torch
import torch.nn.functional as F
from torch import nn


class ClassifierHead(nn.Module):
    def __init__(self, in_features: int, num_classes: int, drop_rate: float = 0.2):
        super().__init__()
        self.drop_rate = drop_rate
        self.proj = nn.Linear(in_features, in_features)
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x):
        # TODO: your fix goes here (see the task above).
        pass
        return self.fc(x)
""", {c.name for c in EXERCISE.checks}),
}
