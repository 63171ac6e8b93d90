"""The exercise data_trap: probabilities clamped in place through `.data`, giving silently wrong gradients.

A soft-target cross-entropy clamps the softmax probabilities at `eps` before the log. Softmax saves its
output for backward, so clamping that output in place is an in-place change of a saved tensor:
`p.clamp_(min=eps)` and `p.detach().clamp_(min=eps)` make backward raise the version-counter error (detach
shares the counter), while `p.data.clamp_(min=eps)` (a counter of its own) silences it, and softmax's backward
then computes with the clamped values and no clamp in the graph: a wrong gradient, no error. The reference
clamps out of place. Inputs are drawn with some probabilities below `eps` (the clamp matters) and none near
it (away from the kink, so finite differences and float32 agree).
"""

from __future__ import annotations

from typing import Any

import torch

from .. import checks, finite_differences, probes
from ..messages import INPLACE_ERROR
from ..probes import GRAD
from ..spec import Check, Exercise, ExpectedError, Scenario, Symbol

MARGIN = 0.01
"""No probability is within 1% of eps: both sides of the kink agree in float32 and under finite differences."""


def _drawer(shape: tuple[int, ...], scale: float = 3.0):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        logits = torch.randn(shape, generator=g, dtype=torch.float64) * scale
        target = (torch.randn(shape, generator=g, dtype=torch.float64) * 1.5).softmax(dim=-1)  # soft labels
        eps = 0.005 + 0.045 * torch.rand((), generator=g, dtype=torch.float64).item()
        p = logits.softmax(dim=-1)
        eps = max(eps, 1.5 * p.min().item())  # at least one probability is clamped
        while ((p / eps - 1).abs() < MARGIN).any():
            eps *= 1 + 2 * MARGIN
        return {"logits": logits.to(dtype), "target": target.to(dtype), "eps": eps}

    return draw


def _forward_backward(ns, inputs, device, obs):
    logits = inputs["logits"].requires_grad_(True)
    target = inputs["target"]
    before = (logits.detach().clone(), target.detach().clone())

    def unchanged() -> bool:
        return torch.equal(logits.detach(), before[0]) and torch.equal(target.detach(), before[1])

    loss = ns["clamped_softmax_loss"](logits, target, inputs["eps"])
    obs["loss"] = loss.detach().clone()
    obs["inputs unchanged"] = unchanged()
    loss.backward()
    probes.observe_grad(obs, "logits", logits)
    obs["inputs unchanged"] = unchanged()


FORWARD_BACKWARD_WRITES = ("loss", "inputs unchanged", GRAD)


def _gradcheck(ns, inputs, device, obs):
    target, eps = inputs["target"], inputs["eps"]
    finite_differences.observe(obs, lambda logits: ns["clamped_softmax_loss"](logits, target, eps),
                               (inputs["logits"].requires_grad_(True),))


PUBLIC, BATCH, SEQUENCE, GRADCHECK = "public", "batch", "sequence", "gradcheck"
F64 = (torch.float64,)

EXERCISE = Exercise(
    id="data_trap",
    number=2,
    title="The .data trap",
    defines=(Symbol("clamped_softmax_loss", "function", ("logits", "target", "eps")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer((4, 5)), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(BATCH, _drawer((8, 10)), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(SEQUENCE, _drawer((2, 3, 6)), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer((3, 5)), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=(
        Check("forward", 2, "The loss equals -(target * softmax(logits, -1).clamp(min=eps).log()).sum(-1).mean().",
              checks.matches_reference(("loss",), "Loss"), public=True),
        Check("backward runs", 1, "loss.backward() runs through clamped_softmax_loss.",
              checks.completes((PUBLIC, BATCH, SEQUENCE), "Backward"), public=True),
        Check("gradients", 3, "The gradient of logits matches the reference (the clamp recorded by autograd), "
              "in float32 and float64.",
              checks.matches_reference((GRAD,), "Gradient", (BATCH, SEQUENCE))),
        Check("gradcheck", 2, "The gradient of logits agrees with finite differences (float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences (is part of the computation hidden from autograd, through "
                                       "`.data` or `detach()`?)"), public=True),
        Check("caller's tensors unchanged", 2, "The caller's `logits` and `target` hold the same values after "
              "forward and backward.",
              checks.holds("inputs unchanged", (PUBLIC, BATCH, SEQUENCE), "Your function changed the caller's "
                           "`logits` or `target` in place; compute with new tensors instead"), public=True),
    ),
)
