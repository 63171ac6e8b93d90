"""The exercise custom_inplace: an in-place op of your own that autograd can check, with a learnable parameter.

`prelu_(x, weight)` changes x in place to PReLU's output (x where x > 0, weight[c] * x elsewhere, one weight per
channel, the channels along dimension 1) as a `torch.autograd.Function`. The Function must tell autograd that it
changed x (`ctx.mark_dirty`), or autograd keeps x's old history and hands back a new view instead of x; its
backward needs the input for the weight's gradient, but the input was overwritten: it must save its output with
`save_for_backward`, so that the version counter catches a later in-place change of the result, and recover the
input from it (y / weight where y is negative, weight > 0). A later change must make backward raise PyTorch's own
error, whose versions say that one write came after the save. Hidden shapes (two to four dimensions) are drawn
per salt; one hidden scenario hands the op an input laid out column-major (its dimensions' order reversed: not
contiguous). Nothing counts until the
forward values are right and the op is in place, visibly to autograd (the gate).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd.function import BackwardCFunction

from .. import finite_differences, probes
from ..core import checks
from ..core.evidence import Evidence, failed
from ..core.messages import INPLACE_ERROR, VERSION_CHECK
from ..core.spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from ..probes import GRAD
from . import _contract as contract

MESSAGE_BOUND = 2000
"""How much of the message of the error a later change made backward raise is kept (it may be the answer's)."""


def _shape(g: torch.Generator, dims: int | None) -> tuple[int, ...]:
    """[N, C, *]: two to four dimensions (or `dims`), each of size 1 to 5, at least 2 channels."""
    n = dims if dims is not None else int(torch.randint(2, 5, (), generator=g))
    sizes = torch.randint(1, 6, (n,), generator=g).tolist()
    sizes[1] = max(sizes[1], 2)
    return tuple(sizes)


def _drawer(shape: tuple[int, ...] | None = None, dims: int | None = None, column_major: bool = False):
    """shape None: drawn per salt (_shape). The weight is positive, between 0.05 and 0.45 per channel."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        size = shape if shape is not None else _shape(g, dims)
        return {
            "column_major": column_major,
            "x": torch.randn(size, generator=g, dtype=torch.float64).to(dtype),
            "weight": (0.05 + 0.4 * torch.rand(size[1], generator=g, dtype=torch.float64)).to(dtype),
            "grad_output": torch.randn(size, generator=g, dtype=torch.float64).to(dtype),
        }

    return draw


def _leaves(inputs: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """The input's leaf (column-major where the scenario says so: `a * 1` keeps that layout) and the weight."""
    a = inputs["x"]
    if inputs["column_major"]:
        dims = tuple(reversed(range(a.dim())))
        a = a.permute(dims).contiguous().permute(dims)
    return a.requires_grad_(True), inputs["weight"].requires_grad_(True)


def _forward_backward(ns, inputs, device, obs):
    a, weight = _leaves(inputs)
    x = a * 1  # not a leaf: a leaf that requires grad may not be changed in place at all
    version, address = x._version, x.data_ptr()
    y = ns["prelu_"](x, weight)
    obs["output"] = y.detach().clone()
    obs["returns x"] = y is x
    obs["same storage"] = y.data_ptr() == address
    # At least 2: the write bumps x's counter once and mark_dirty once more. A write through `x.data` (a
    # counter of its own) leaves only mark_dirty's bump, which it would give with no write at all.
    obs["version advanced"] = x._version >= version + 2
    obs["custom node"] = isinstance(y.grad_fn, BackwardCFunction) and type(y.grad_fn).__name__.endswith("Backward")
    probes.backward_with(y, inputs["grad_output"])
    probes.observe_grad(obs, "x", a)
    probes.observe_grad(obs, "weight", weight)


FORWARD_BACKWARD_WRITES = ("output", "returns x", "same storage", "version advanced", "custom node", GRAD)


def _later_change(ns, inputs, device, obs):
    a, weight = _leaves(inputs)
    y = ns["prelu_"](a * 1, weight)
    y.mul_(2)
    try:
        y.sum().backward()
        obs["later change"] = ""
    except RuntimeError as e:
        obs["later change"] = str(BaseException.__str__(e))[:MESSAGE_BOUND] or "RuntimeError"


def _gradcheck(ns, inputs, device, obs):
    a, weight = _leaves(inputs)
    finite_differences.observe(obs, lambda x, w: ns["prelu_"](x.clone(), w), (a, weight))


def _caught(scenarios: tuple[str, ...]) -> Rule:
    """A later in-place change of the result makes backward raise PyTorch's own error, one version later."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            said = pair.got.values.get("later change")
            if not isinstance(said, str):
                return checks.missing(ev, pair, "later change", "What backward did after a later change")
            if not said:
                text = ("`y = prelu_(x, weight); y.mul_(2)`, then backward, did not raise the in-place error: save "
                        "the output with ctx.save_for_backward, so that its version counter is checked")
                return failed(text + ".", text)
            parts = VERSION_CHECK.search(said)
            if INPLACE_ERROR.search(said) is None or parts is None:
                text = ("after `y.mul_(2)`, backward raised an error that is not PyTorch's version check (which "
                        "names the saved tensor and its versions): let autograd check the saved output, do not "
                        "raise an error of your own")
                return failed(text + ".", text)
            if int(parts["found"]) - int(parts["expected"]) != 1:
                text = ("backward's error counts another number of writes than the one `y.mul_(2)` made after "
                        "forward. Autograd stamps a saved tensor's version when forward returns, wherever forward "
                        "calls ctx.save_for_backward, so something else changed the saved tensor after forward "
                        "returned, or the tensor saved is not the output: save the output itself, and change "
                        "nothing after forward")
                return failed(exercise_say("{text} (it is at version {found}, saved at {expected}).", text=text,
                                           found=parts["found"], expected=parts["expected"]), text)
        return PASS

    return Rule(evaluate, scenarios, ("later change",))


PUBLIC, BATCH, COLUMN_MAJOR, LATER, GRADCHECK = (
    "public", "batch", "column-major input", "later in-place change", "gradcheck")
FORWARD_SCENARIOS = (PUBLIC, BATCH, COLUMN_MAJOR)
F64 = (torch.float64,)
FORWARD = checks.matches_reference(("output",), "Forward output", FORWARD_SCENARIOS)
IN_PLACE = checks.all_of(
    checks.holds("returns x", FORWARD_SCENARIOS, "prelu_ did not return the tensor `x` itself (did forward tell "
                 "autograd that it changed x, and return x?)"),
    checks.holds("same storage", FORWARD_SCENARIOS, "The result does not live in x's storage"),
    checks.holds("version advanced", FORWARD_SCENARIOS, "x's version counter moved by less than 2 across prelu_ "
                 "(your write moves it once, mark_dirty once more), so autograd cannot see the write: was it made "
                 "through `x.data`, which has a counter of its own, or not made at all?"),
    checks.holds("custom node", FORWARD_SCENARIOS, "The result's grad_fn is not the backward of a "
                 "torch.autograd.Function: build prelu_ on one"))
NEEDS = ("the output must first be right, and x changed in place visibly to autograd (the checks `forward` and "
         "`in place`)")

EXERCISE = Exercise(
    id="custom_inplace",
    number=11,
    title="An in-place op of your own",
    defines=(Symbol("prelu_", "function", ("x", "weight")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer((3, 4)), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(BATCH, _drawer(), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(COLUMN_MAJOR, _drawer(dims=4, column_major=True), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(LATER, _drawer((2, 3, 4)), _later_change, ("later change",), public=True),
        Scenario(GRADCHECK, _drawer((2, 3, 2)), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64,
                 public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, IN_PLACE), NEEDS,
        Check("forward", 2, "The result is x where x > 0 and weight[c] * x elsewhere, c the channel (dimension 1), "
              "for inputs of two to four dimensions and any layout.", FORWARD, public=True),
        Check("in place", 2, "prelu_ returns x itself, in its own storage, with its version counter advanced by "
              "at least 2 (once by your write, once by mark_dirty), and the result's grad_fn is your Function's "
              "backward.", IN_PLACE, public=True),
        Check("gradients", 2, "The gradients of x and of weight match the reference, in float32 and float64.",
              checks.matches_reference((GRAD,), "Gradient", (BATCH, COLUMN_MAJOR))),
        Check("gradcheck", 2, "The Function's backward agrees with finite differences, for x and weight (float64 "
              "gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
        Check("saves output", 2, "The output is saved with save_for_backward, so that changing the result in "
              "place afterwards makes backward raise PyTorch's in-place error, one version later.",
              _caught((LATER,)), public=True),
    ),
)

CONTRACT = contract.Contract("prelu_", (
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "a column-major input too"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
))
"""The situations the notebook lets `prelu_` meet (tests/test_contracts_spanned.py measures them)."""
