"""The exercise residual_add: `+=` on the output of a ReLU in a residual block (seed 001).

`relu` saves its output for backward; `out += x` changes that output in place, so backward raises. Hidden
shapes are drawn per salt, and one hidden scenario hands the block a channels-last input (not contiguous), as
an image pipeline may. Nothing counts until the forward is right and backward runs (the gate).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import finite_differences, probes
from ..core import checks
from ..core.messages import INPLACE_ERROR
from ..core.spec import Check, Exercise, ExpectedError, Scenario, Symbol
from ..probes import BUFFER, GRAD


class ResidualBlockLayout(nn.Module):
    """The block's parameters and buffers, and no forward: the shapes the grader draws a state for.
    The reference (references/residual_add.py, never installed) adds the forward."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)


def _drawn(g: torch.Generator, size: int | tuple[int, int]) -> int:
    """A size, or one drawn per salt from a (low, high) range."""
    return size if isinstance(size, int) else int(torch.randint(size[0], size[1] + 1, (), generator=g))


def _drawer(channels: int | tuple[int, int], batch: int | tuple[int, int], size: int | tuple[int, int],
            x_requires_grad: bool = True, channels_last: bool = False):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        channels_, batch_, size_ = _drawn(g, channels), _drawn(g, batch), _drawn(g, size)
        channels_ = max(channels_, 2) if channels_last else channels_
        shape = (batch_, channels_, size_, size_)
        return {
            "channels_last": channels_last,
            "channels": channels_,
            "x_requires_grad": x_requires_grad,
            "x": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
            **probes.draw_state(ResidualBlockLayout(channels_), g, dtype),
        }

    return draw


def _forward_backward(train: bool):
    def run(ns, inputs, device, obs):
        model = probes.build(ns["ResidualBlock"], (inputs["channels"],), inputs, device, inputs["x"].dtype)
        model.train(train)
        x = inputs["x"]
        if inputs["channels_last"]:  # the same values, laid out channels last: a leaf that is not contiguous
            x = x.contiguous(memory_format=torch.channels_last)
        x = x.requires_grad_(inputs["x_requires_grad"])
        before = x.detach().clone()
        out = model(x)
        obs["output"] = out
        obs["x unchanged"] = torch.equal(x.detach(), before)
        probes.backward_with(out, inputs["grad_output"])
        if x.requires_grad:
            probes.observe_grad(obs, "x", x)
        probes.observe_grads(obs, model)
        probes.observe_buffers(obs, model)
        obs["x unchanged"] = torch.equal(x.detach(), before)

    return run


FORWARD_BACKWARD_WRITES = ("output", "x unchanged", GRAD, BUFFER)


def _gradcheck(ns, inputs, device, obs):
    model = probes.build(ns["ResidualBlock"], (inputs["channels"],), inputs, device, inputs["x"].dtype)
    names = ("conv1.weight", "bn2.weight")
    params = {n: p.detach().clone().requires_grad_(True) for n, p in model.named_parameters() if n in names}

    def fn(x, *weights):
        return torch.func.functional_call(model, dict(zip(names, weights)), (x,))

    x = inputs["x"].requires_grad_(True)
    finite_differences.observe(obs, fn, (x, *(params[n] for n in names)))


TRAIN, EVAL, FROZEN, GRADCHECK, PUBLIC = "train", "eval", "input without grad", "gradcheck", "public"
CHANNELS_LAST = "channels-last input"
F64 = (torch.float64,)
FORWARD = checks.matches_reference(("output",), "Forward output")
BACKWARD = checks.completes((PUBLIC, TRAIN, CHANNELS_LAST), "Backward")
NEEDS = "the block's output must first be right and backward run (the checks `forward` and `backward runs`)"

EXERCISE = Exercise(
    id="residual_add",
    number=3,
    title="The += residual",
    defines=(Symbol("ResidualBlock", "class", ("channels",)),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer(2, 2, 4), _forward_backward(train=True), FORWARD_BACKWARD_WRITES, public=True),
        Scenario(TRAIN, _drawer((2, 5), (2, 4), (3, 6)), _forward_backward(train=True), FORWARD_BACKWARD_WRITES),
        Scenario(EVAL, _drawer((2, 5), (2, 4), (3, 6)), _forward_backward(train=False), FORWARD_BACKWARD_WRITES),
        Scenario(FROZEN, _drawer((2, 5), (2, 4), (3, 6), x_requires_grad=False), _forward_backward(train=True),
                 FORWARD_BACKWARD_WRITES),
        Scenario(CHANNELS_LAST, _drawer((2, 5), (2, 4), (3, 6), channels_last=True), _forward_backward(train=True),
                 FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer(2, 2, 3), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, BACKWARD), NEEDS,
        Check("forward", 2, "The block's output equals relu(bn2(conv2(relu(bn1(conv1(x)))))) + x, for an input "
              "in any memory layout.", FORWARD, public=True),
        Check("backward runs", 1, "loss.backward() runs through the block in training mode.", BACKWARD, public=True),
        Check("gradients", 3, "Gradients of the input and of every parameter match the reference, "
              "in float32 and float64.", checks.matches_reference((GRAD,), "Gradient", (TRAIN, FROZEN, CHANNELS_LAST))),
        Check("gradcheck", 1, "Analytic gradients agree with finite differences (float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
        Check("train and eval", 1, "Eval mode uses the running statistics and leaves them unchanged; "
              "training mode updates them as BatchNorm does.",
              checks.all_of(checks.matches_reference(("output", GRAD), "Eval mode", (EVAL,)),
                            checks.matches_reference((BUFFER,), "BatchNorm running statistics"))),
        Check("caller's tensors unchanged", 2, "The input tensor `x` is not modified by forward or backward.",
              checks.holds("x unchanged", (PUBLIC, TRAIN, FROZEN, CHANNELS_LAST),
                           "Your block changed the caller's `x` in place"),
              public=True),
    ),
)
