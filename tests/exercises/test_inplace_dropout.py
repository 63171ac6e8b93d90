"""Exercise 2 (inplace_dropout): the solution, correct alternatives and plausible wrong fixes."""

import nbformat
import pytest

from autograder.exercises import get
from tests.conftest import SOLUTIONS, failing, solution_code

ID = "inplace_dropout"

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


def test_failure_cell_raises_the_declared_error():
    """The notebook's code cells up to the failure cell run in order; that cell raises the declared error."""
    (path,) = SOLUTIONS.glob(f"*_{ID}.ipynb")
    namespace = {"__name__": "__notebook__"}
    raised = 0
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        if "answer" in cell.metadata.get("tags", []):
            break
        code = compile(cell.source, "<cell>", "exec")
        if "raises-exception" not in cell.metadata.get("tags", []):
            exec(code, namespace)  # noqa: S102 - the notebook's own setup
            continue
        with pytest.raises(Exception) as info:
            exec(code, namespace)  # noqa: S102
        assert get(ID).failure.matches(type(info.value).__name__, str(info.value)), info.value
        raised += 1
    assert raised


def test_solution_passes_the_self_check(grade):
    result = grade(ID, solution_code(ID), public_only=True)
    assert result.score == result.max_score > 0, result


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"backward runs", "gradients", "gradcheck", "autocast"} <= failing(result)
    assert {"forward", "dropout", "train and eval"}.isdisjoint(failing(result))  # the math is right
    for name in ("backward runs", "autocast"):
        assert "modified by an inplace operation" in next(t.output for t in result.tests if t.name == name)
