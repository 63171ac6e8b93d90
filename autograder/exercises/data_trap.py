"""The exercise data_trap: `.data` used to dodge the in-place error, giving silently wrong gradients.

Normalising a weight in place raises the leaf error; `weight.data.div_(...)` silences it, but autograd
never sees the division, so the weight's gradient misses the normalisation (and the caller's weight
is overwritten). The checks compare gradients on hidden inputs and the weight after the call.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import checks, finite_differences, probes
from ..probes import GRAD
from ..spec import LEAF_INPLACE_ERROR, Check, Exercise, ExpectedError, Scenario, Symbol


def _drawer(batch: int, fan_in: int, fan_out: int, x_requires_grad: bool = True):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "x_requires_grad": x_requires_grad,
            "x": torch.randn(batch, fan_in, generator=g, dtype=torch.float64).to(dtype),
            "weight": torch.randn(fan_out, fan_in, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(batch, fan_out, generator=g, dtype=torch.float64).to(dtype),
        }

    return draw


def _forward_backward(ns, inputs, device, obs):
    x = inputs["x"].requires_grad_(inputs["x_requires_grad"])
    weight = nn.Parameter(inputs["weight"])  # a leaf, as in a module
    before = weight.detach().clone()
    out = ns["normalized_linear"](x, weight)
    obs["output"] = out.detach().clone()
    obs["weight unchanged"] = torch.equal(weight.detach(), before)
    out.backward(inputs["grad_output"])
    if x.requires_grad:
        probes.observe_grad(obs, "x", x)
    probes.observe_grad(obs, "weight", weight)
    obs["weight unchanged"] = torch.equal(weight.detach(), before)


FORWARD_BACKWARD_WRITES = ("output", "weight unchanged", GRAD)


def _gradcheck(ns, inputs, device, obs):
    x = inputs["x"].requires_grad_(True)
    weight = inputs["weight"].requires_grad_(True)
    finite_differences.observe(obs, lambda a, w: ns["normalized_linear"](a, w), (x, weight))


PUBLIC, BATCH, FROZEN, GRADCHECK = "public", "batch", "input without grad", "gradcheck"
F64 = (torch.float64,)

EXERCISE = Exercise(
    id="data_trap",
    number=2,
    title="The .data trap",
    defines=(Symbol("normalized_linear", "function", ("x", "weight")),),
    failure=ExpectedError("RuntimeError", LEAF_INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer(3, 4, 2), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(BATCH, _drawer(7, 6, 5), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(FROZEN, _drawer(4, 5, 3, x_requires_grad=False), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer(3, 4, 2), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=(
        Check("forward", 2, "The output equals x @ (weight / weight.norm(dim=1, keepdim=True)).T.",
              checks.matches_reference(("output",), "Forward output"), public=True),
        Check("backward runs", 1, "out.backward() runs through normalized_linear.",
              checks.completes((PUBLIC, BATCH, FROZEN), "Backward"), public=True),
        Check("gradients", 3, "Gradients of x and of weight match the reference, in float32 and float64.",
              checks.matches_reference((GRAD,), "Gradient", (BATCH, FROZEN))),
        Check("gradcheck", 2, "Analytic gradients for x and weight agree with finite differences "
              "(float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences (is part of the computation hidden from autograd?)"), public=True),
        Check("weight unchanged", 2, "The caller's weight holds the same values after forward and backward.",
              checks.holds("weight unchanged", (PUBLIC, BATCH, FROZEN), "Your function changed the caller's "
                           "`weight`; normalise a new tensor instead"), public=True),
    ),
)
