"""The exercise data_trap: probabilities clamped in place through `.data`, giving silently wrong gradients.

A soft-target cross-entropy clamps the softmax probabilities at `eps` before the log. Softmax saves its
output for backward, so clamping that output in place is an in-place change of a saved tensor:
`p.clamp_(min=eps)` and `p.detach().clamp_(min=eps)` make backward raise the version-counter error (detach
shares the counter), while `p.data.clamp_(min=eps)` (a counter of its own) silences it, and softmax's backward
then computes with the clamped values and no clamp in the graph: a wrong gradient, no error. The reference
clamps out of place. Inputs are drawn with some probabilities below `eps` (the clamp matters) and none near
it (away from the kink, so finite differences and float32 agree). Hidden shapes are drawn per salt; one hidden
scenario hands the loss transposed (non-contiguous) logits, another logits in the hundreds, where a softmax
written without its max shift overflows. Nothing counts until the loss, its backward and the gradient check
are right (the gate): the report's `.data` clamp, which runs, earns nothing.
"""

from __future__ import annotations

from typing import Any, cast

import torch

from .. import finite_differences, probes
from ..core import checks
from ..core.messages import INPLACE_ERROR
from ..core.spec import Check, Exercise, ExpectedError, Scenario, Symbol
from ..probes import GRAD

MARGIN = 0.01
"""No probability is within 1% of eps: both sides of the kink agree in float32 and under finite differences."""


def _sizes(g: torch.Generator, *ranges: tuple[int, int]) -> tuple[int, ...]:
    """One size per (low, high) range, drawn per salt (high included)."""
    return tuple(int(torch.randint(low, high + 1, (), generator=g)) for low, high in ranges)


def _drawer(shape: tuple[int, ...] | tuple[tuple[int, int], ...], scale: float = 3.0):
    """shape: sizes, or (low, high) ranges to draw them from per salt."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        size = _sizes(g, *cast(tuple[tuple[int, int], ...], shape)) if isinstance(shape[0], tuple) else shape
        logits = torch.randn(size, generator=g, dtype=torch.float64) * scale
        target = (torch.randn(size, generator=g, dtype=torch.float64) * 1.5).softmax(dim=-1)  # soft labels
        eps = 0.005 + 0.045 * torch.rand((), generator=g, dtype=torch.float64).item()
        p = logits.softmax(dim=-1)
        eps = max(eps, 1.5 * p.min().item())  # at least one probability is clamped
        while ((p / eps - 1).abs() < MARGIN).any():
            eps *= 1 + 2 * MARGIN
        return {"logits": logits.to(dtype), "target": target.to(dtype), "eps": eps}

    return draw


def _strided(t: torch.Tensor) -> torch.Tensor:
    """t's values in a non-contiguous layout (a transposed copy, transposed back): a leaf once it requires grad."""
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


def _forward_backward(ns, inputs, device, obs):
    _run(ns, inputs, obs, inputs["logits"].requires_grad_(True))


def _forward_backward_strided(ns, inputs, device, obs):
    _run(ns, inputs, obs, _strided(inputs["logits"]).requires_grad_(True))


def _run(ns, inputs, obs, logits: torch.Tensor) -> None:
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
STRIDED, LARGE = "transposed logits", "large logits"
RUNS = (PUBLIC, BATCH, SEQUENCE, STRIDED, LARGE)
F64 = (torch.float64,)
FORWARD = checks.matches_reference(("loss",), "Loss")
BACKWARD = checks.completes(RUNS, "Backward")
GRADCHECK_RULE = finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                          "differences (is part of the computation hidden from autograd, through "
                                          "`.data` or `detach()`?)")
NEEDS = ("the loss must first be right, its backward run, and its gradient agree with finite differences (the "
         "checks `forward`, `backward runs` and `gradcheck`)")

EXERCISE = Exercise(
    id="data_trap",
    number=2,
    title="The .data trap",
    defines=(Symbol("clamped_softmax_loss", "function", ("logits", "target", "eps")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer((4, 5)), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(BATCH, _drawer(((2, 16), (3, 12))), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(SEQUENCE, _drawer(((2, 4), (2, 5), (3, 8))), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(STRIDED, _drawer(((2, 5), (3, 6), (3, 8))), _forward_backward_strided, FORWARD_BACKWARD_WRITES),
        Scenario(LARGE, _drawer(((4, 8), (5, 10)), scale=400.0), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer((3, 5)), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, BACKWARD, GRADCHECK_RULE), NEEDS,
        Check("forward", 2, "The loss equals -(target * softmax(logits, -1).clamp(min=eps).log()).sum(-1).mean(), "
              "for logits of any layout and size.", FORWARD, public=True),
        Check("backward runs", 1, "loss.backward() runs through clamped_softmax_loss.", BACKWARD, public=True),
        Check("gradients", 3, "The gradient of logits matches the reference (the clamp recorded by autograd), "
              "in float32 and float64.",
              checks.matches_reference((GRAD,), "Gradient", (BATCH, SEQUENCE, STRIDED, LARGE))),
        Check("gradcheck", 2, "The gradient of logits agrees with finite differences (float64 gradcheck).",
              GRADCHECK_RULE, public=True),
        Check("caller's tensors unchanged", 2, "The caller's `logits` and `target` hold the same values after "
              "forward and backward.",
              checks.holds("inputs unchanged", RUNS, "Your function changed the caller's "
                           "`logits` or `target` in place; compute with new tensors instead"), public=True),
    ),
)
