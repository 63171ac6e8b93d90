"""What PyTorch's message names in "which is output 0 of X", each claim of book/reference/blame.md run here.

X is the `grad_fn` of the saved tensor when backward reads it. For a tensor an op saved as its output (relu,
sigmoid, exp, softmax) that is the saving op. For one saved as an input (gelu, pow, mul, linear) it is the last
in-place op that autograd recorded writing it, or, when the write was not recorded (`torch.no_grad()`, an
optimizer's step), the op that made it; for a view whose base was written, a regenerated `AsStrided`; a leaf
has none, and the clause is left out. Never the op that saved an input. The locator's message says the same,
and its report says which kind of save it was (`saved_as`).
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from autograder.blame import locate, report_of


def _a():
    torch.manual_seed(0)
    return torch.randn(5, requires_grad=True)


def relu_output():
    y = torch.relu(_a() * 1)
    y += 1
    y.sum().backward()


def sigmoid_output():
    y = torch.sigmoid(_a())
    y.mul_(2)
    y.sum().backward()


def exp_output():
    y = _a().exp()
    y.add_(1)
    y.sum().backward()


def softmax_output():
    y = torch.softmax(_a() * 1, dim=0)
    y.add_(1)
    y.sum().backward()


def gelu_input():
    inp = _a().exp()
    y = F.gelu(inp)
    inp.add_(2)
    y.sum().backward()


def pow_input():
    inp = _a() * 1
    y = inp.pow(2)
    inp.mul_(3)
    y.sum().backward()


def mul_input():
    a = _a()
    inp = a.exp()
    y = inp * a
    inp.add_(1)
    y.sum().backward()


def linear_input():
    torch.manual_seed(0)
    lin = torch.nn.Linear(5, 3)
    inp = _a().reshape(1, 5).exp()
    y = lin(inp)
    inp.add_(1)
    y.sum().backward()


def gelu_input_written_under_no_grad():
    inp = _a().exp()
    y = F.gelu(inp)
    with torch.no_grad():
        inp.add_(2)
    y.sum().backward()


def view_whose_base_was_written():
    base = _a() * 1
    v = base[:3]
    y = v * v
    base.mul_(2)
    y.sum().backward()


def leaf_stepped_by_an_optimizer():
    w = _a()
    opt = torch.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    opt.step()
    y.backward()


CASES = {  # the program: (what the message names, what saved the tensor, saved as)
    relu_output: ("Relu", "Relu", "output"),
    sigmoid_output: ("Sigmoid", "Sigmoid", "output"),
    exp_output: ("Exp", "Exp", "output"),
    softmax_output: ("Softmax", "Softmax", "output"),
    gelu_input: ("Add", "Gelu", "input"),  # the in-place add_ that wrote it
    pow_input: ("Mul", "Pow", "input"),
    mul_input: ("Add", "Mul", "input"),
    linear_input: ("Add", "Addmm", "input"),
    gelu_input_written_under_no_grad: ("Exp", "Gelu", "input"),  # the write was not recorded: what made it
    view_whose_base_was_written: ("AsStrided", "Mul", "input"),
    leaf_stepped_by_an_optimizer: (None, "Mul", "input"),  # a leaf: no clause at all
}


def named(message: str) -> str | None:
    """The node of "which is output N of X", in this torch's wording or the older one (`XBackward0`)."""
    found = re.search(r"which is output \d+ of (\w+),", message)
    return re.sub(r"Backward\d*$", "", found.group(1)) if found else None


@pytest.mark.parametrize("program", CASES, ids=[p.__name__ for p in CASES])
def test_the_op_clause_names_the_tensors_grad_fn_at_backward_never_the_op_that_saved_an_input(program):
    node, saver, saved_as = CASES[program]
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as plain:
        program()
    assert named(str(plain.value)) == node, str(plain.value)
    if saved_as == "input":
        assert named(str(plain.value)) != saver
    with pytest.raises(RuntimeError) as located, locate():
        program()
    report = report_of(located.value)
    assert named(str(located.value)) == node  # the locator writes PyTorch's clause as PyTorch would
    assert report.saved_as == saved_as
    assert re.sub(r"Backward\d*$", "", report.backward_node) == saver  # the node that needed it is the saver's
