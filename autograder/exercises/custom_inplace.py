"""The exercise custom_inplace: an in-place op of your own that autograd can check.

A `torch.autograd.Function` that changes its input must say so (`ctx.mark_dirty`), or autograd keeps
the input's old history and returns a new view instead of the tensor itself; and it must save its
output with `save_for_backward`, so that the version counter catches a later in-place change of the
result, as it does for PyTorch's own `leaky_relu_`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd.function import BackwardCFunction

from .. import checks, finite_differences, probes
from ..messages import INPLACE_ERROR
from ..probes import GRAD
from ..spec import Check, Exercise, ExpectedError, Scenario, Symbol


def _drawer(shape: tuple[int, ...], default_slope: bool = False):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        slope = None if default_slope else 0.05 + 0.4 * torch.rand((), generator=g, dtype=torch.float64).item()
        return {
            "slope": slope,
            "x": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
        }

    return draw


def _call(ns, x: torch.Tensor, slope: float | None) -> torch.Tensor:
    return ns["leaky_relu_"](x) if slope is None else ns["leaky_relu_"](x, slope)


def _forward_backward(ns, inputs, device, obs):
    a = inputs["x"].requires_grad_(True)
    x = a * 1  # not a leaf: a leaf that requires grad may not be changed in place at all
    version, address = x._version, x.data_ptr()
    y = _call(ns, x, inputs["slope"])
    obs["output"] = y.detach().clone()
    obs["returns x"] = y is x
    obs["same storage"] = y.data_ptr() == address
    # At least 2: the write bumps x's counter once and mark_dirty once more. A write through `x.data` (a
    # counter of its own) leaves only mark_dirty's bump, which it would give with no write at all.
    obs["version advanced"] = x._version >= version + 2
    obs["custom node"] = isinstance(y.grad_fn, BackwardCFunction) and type(y.grad_fn).__name__.endswith("Backward")
    probes.backward_with(y, inputs["grad_output"])
    probes.observe_grad(obs, "x", a)


FORWARD_BACKWARD_WRITES = ("output", "returns x", "same storage", "version advanced", "custom node", GRAD)


def _later_change(ns, inputs, device, obs):
    y = _call(ns, inputs["x"].requires_grad_(True) * 1, inputs["slope"])
    y.mul_(2)
    try:
        y.sum().backward()
        obs["later change caught"] = False
    except RuntimeError as e:
        obs["later change caught"] = INPLACE_ERROR.search(str(e)) is not None


def _gradcheck(ns, inputs, device, obs):
    slope = inputs["slope"]
    finite_differences.observe(obs, lambda a: _call(ns, a.clone(), slope), (inputs["x"].requires_grad_(True),))


PUBLIC, BATCH, DEFAULT, LATER, GRADCHECK = "public", "batch", "default slope", "later in-place change", "gradcheck"
FORWARD = (PUBLIC, BATCH)
F64 = (torch.float64,)

EXERCISE = Exercise(
    id="custom_inplace",
    number=11,
    title="An in-place op of your own",
    defines=(Symbol("leaky_relu_", "function", ("x", "slope")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer((3, 4)), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(BATCH, _drawer((5, 2, 6)), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(DEFAULT, _drawer((4, 5), default_slope=True), _forward_backward, FORWARD_BACKWARD_WRITES,
                 public=True),
        Scenario(LATER, _drawer((3, 4)), _later_change, ("later change caught",), public=True),
        Scenario(GRADCHECK, _drawer((3, 4)), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=(
        Check("forward", 2, "The result is x where x > 0 and slope * x elsewhere.",
              checks.matches_reference(("output",), "Forward output", FORWARD), public=True),
        Check("in place", 2, "leaky_relu_ returns x itself, in its own storage, with its version counter "
              "advanced by at least 2 (once by your write, once by mark_dirty), and the result's grad_fn is "
              "your Function's backward.",
              checks.all_of(
                  checks.holds("returns x", FORWARD, "leaky_relu_ did not return the tensor `x` "
                               "itself (did forward call ctx.mark_dirty(x) and return x?)"),
                  checks.holds("same storage", FORWARD, "The result does not live in x's storage"),
                  checks.holds("version advanced", FORWARD, "x's version counter moved by less than 2 across "
                               "leaky_relu_ (your write moves it once, mark_dirty once more), so autograd "
                               "cannot see the write: was it made through `x.data`, which has a counter of "
                               "its own, or not made at all?"),
                  checks.holds("custom node", FORWARD, "The result's grad_fn is not the backward "
                               "of a torch.autograd.Function: build leaky_relu_ on one"),
              ), public=True),
        Check("gradients", 2, "The gradient of x matches the reference, in float32 and float64.",
              checks.matches_reference((GRAD.key("x"),), "Gradient", (BATCH,))),
        Check("gradcheck", 2, "The Function's backward agrees with finite differences (float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
        Check("saves output", 1, "The output is saved with save_for_backward, so that changing the result "
              "in place afterwards makes backward raise the in-place error.",
              checks.holds("later change caught", (LATER,), "`y = leaky_relu_(x); y.mul_(2)` then backward did "
                           "not raise the in-place error: save the output with ctx.save_for_backward"),
              public=True),
        Check("default slope", 1, "Called without a slope, leaky_relu_ uses 0.01.",
              checks.matches_reference(("output",), "Forward output with the default slope", (DEFAULT,)),
              public=True),
    ),
)
