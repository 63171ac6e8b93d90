"""The exercise multi_output_view: `q, k, v = qkv.chunk(3, dim=-1)`, then `q *= self.scale` (attention).

`chunk` (like `split` and `unbind`) returns several views of one tensor, and autograd refuses an in-place
change of such a view while it records: the write itself raises, in the forward pass, before any
version counter is compared (`Output 0 of Split is a view and is being modified inplace...`). Under
`torch.no_grad()` the write goes through, and the next use of `q`, `k` or `v` raises instead. The checks
compare the output and every gradient with the reference's on hidden inputs, and check that neither the
caller's input nor the module's parameters are changed (folding the scale into the weights is not a fix).
"""

from __future__ import annotations

import re
from typing import Any

import torch
from torch import nn

from .. import finite_differences, probes
from ..core import checks
from ..core.messages import VIEW_MODIFIED
from ..core.spec import Check, Exercise, ExpectedError, Scenario, Symbol
from ..probes import GRAD

MULTI_OUTPUT_VIEW_ERROR = re.compile(
    r"Output \d+ of \w+ " + VIEW_MODIFIED + r"\. This view is the output of a function that returns multiple views\."
)
"""PyTorch's refusal of an in-place change to an output of `chunk`, `split` or `unbind` (`of Split`, `of
SplitWithSizes`, `of Unbind` in torch 2.13): raised at the write, or, where the write ran under no_grad, at
the next use of any of the views."""


class AttentionLayout(nn.Module):
    """The block's parameters and no forward: the shapes the grader draws a state for. The reference
    (references/multi_output_view.py, never installed) adds the forward."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)


def _drawer(dim: int, heads: int, batch: int | tuple[int, int], tokens: int | tuple[int, int],
            x_requires_grad: bool = True, sequence_first: bool = False):
    """A batch size or token count given as (low, high) is drawn per salt. `sequence_first`: the scenario hands
    the block x as the transpose of a [tokens, batch, dim] tensor (not contiguous), as a sequence-first model
    would."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        batch_, tokens_ = (n if isinstance(n, int) else int(torch.randint(n[0], n[1] + 1, (), generator=g))
                           for n in (batch, tokens))
        shape = (batch_, tokens_, dim)
        return {
            "sequence_first": sequence_first,
            "dim": dim,
            "heads": heads,
            "x_requires_grad": x_requires_grad,
            "x": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(shape, generator=g, dtype=torch.float64).to(dtype),
            **probes.draw_state(AttentionLayout(dim, heads), g, dtype),
        }

    return draw


def _unchanged(model: nn.Module, before: dict[str, torch.Tensor]) -> bool:
    return all(torch.equal(p.detach(), before[name]) for name, p in model.named_parameters())


def _forward_backward(ns, inputs, device, obs):
    model = probes.build(ns["Attention"], (inputs["dim"], inputs["heads"]), inputs, device, inputs["x"].dtype)
    x = inputs["x"]
    if inputs["sequence_first"]:  # the same values, laid out [tokens, batch, dim]: a leaf that is not contiguous
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    x = x.requires_grad_(inputs["x_requires_grad"])
    x_before = x.detach().clone()
    params_before = {name: p.detach().clone() for name, p in model.named_parameters()}
    out = model(x)
    obs["output"] = out
    obs["x unchanged"] = torch.equal(x.detach(), x_before)
    obs["parameters unchanged"] = _unchanged(model, params_before)
    probes.backward_with(out, inputs["grad_output"])
    if x.requires_grad:
        probes.observe_grad(obs, "x", x)
    probes.observe_grads(obs, model)
    obs["x unchanged"] = torch.equal(x.detach(), x_before)
    obs["parameters unchanged"] = _unchanged(model, params_before)


FORWARD_BACKWARD_WRITES = ("output", "x unchanged", "parameters unchanged", GRAD)


def _gradcheck(ns, inputs, device, obs):
    model = probes.build(ns["Attention"], (inputs["dim"], inputs["heads"]), inputs, device, inputs["x"].dtype)
    names = ("qkv.weight", "qkv.bias")  # the parameters that make q: where a hidden scale goes wrong
    params = {n: p.detach().clone().requires_grad_(True) for n, p in model.named_parameters() if n in names}

    def fn(x, *weights):
        return torch.func.functional_call(model, dict(zip(names, weights)), (x,))

    x = inputs["x"].requires_grad_(True)
    finite_differences.observe(obs, fn, (x, *(params[n] for n in names)))


PUBLIC, HEADS, ONE_HEAD, ONE_TOKEN, FROZEN, GRADCHECK = (
    "public", "several heads", "one head", "one token", "input without grad", "gradcheck")
SEQUENCE_FIRST = "sequence-first input"
FORWARD_BACKWARD = (PUBLIC, HEADS, ONE_HEAD, ONE_TOKEN, FROZEN, SEQUENCE_FIRST)
F64 = (torch.float64,)
FORWARD = checks.matches_reference(("output",), "Forward output")
BACKWARD = checks.completes(FORWARD_BACKWARD, "Forward and backward")
NEEDS = "the output must first be right and backward run (the checks `forward` and `backward runs`)"

EXERCISE = Exercise(
    id="multi_output_view",
    number=6,
    title="Scaling a chunk of qkv",
    defines=(Symbol("Attention", "class", ("dim", "heads")),),
    failure=ExpectedError("RuntimeError", MULTI_OUTPUT_VIEW_ERROR),
    scenarios=(
        # Public shapes whose float32 results are the same bits whatever the number of threads (MKL's sgemm
        # splits some shapes, 6 x 8 x 24 among them, differently on 1 and 2 threads): the shipped public
        # data must read back exactly (tests/test_public_data.py).
        Scenario(PUBLIC, _drawer(4, 2, 2, 3), _forward_backward, FORWARD_BACKWARD_WRITES, public=True),
        Scenario(HEADS, _drawer(12, 3, (2, 5), (3, 8)), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(ONE_HEAD, _drawer(6, 1, (1, 4), (2, 6)), _forward_backward, FORWARD_BACKWARD_WRITES),
        # A decoding step: one sequence, one new token. Each chunk of qkv is then contiguous, so
        # `q.contiguous()` returns q itself and copies nothing.
        Scenario(ONE_TOKEN, _drawer(8, 2, 1, 1), _forward_backward, FORWARD_BACKWARD_WRITES),
        Scenario(FROZEN, _drawer(8, 4, (1, 4), (2, 6), x_requires_grad=False), _forward_backward,
                 FORWARD_BACKWARD_WRITES),
        Scenario(SEQUENCE_FIRST, _drawer(8, 2, (2, 4), (3, 6), sequence_first=True), _forward_backward,
                 FORWARD_BACKWARD_WRITES),
        Scenario(GRADCHECK, _drawer(4, 2, 1, 3), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64, public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, BACKWARD), NEEDS,
        Check("forward", 2, "The output equals proj(softmax(q k^T * head_dim**-0.5) v), heads merged back, with q, k, "
              "v the three chunks of qkv(x), each split into `heads` heads (x of any batch size, length and "
              "layout).", FORWARD, public=True),
        Check("backward runs", 1, "Forward and backward run through the block while autograd records.", BACKWARD,
              public=True),
        Check("gradients", 3, "Gradients of the input and of every parameter match the reference, in float32 and "
              "float64, with one head and several, and for a single token.",
              checks.matches_reference((GRAD,), "Gradient", (HEADS, ONE_HEAD, ONE_TOKEN, FROZEN, SEQUENCE_FIRST))),
        Check("gradcheck", 2, "Analytic gradients of x, qkv.weight and qkv.bias agree with finite differences "
              "(float64 gradcheck).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences (is the scaling of q hidden from autograd?)"), public=True),
        Check("caller's tensors unchanged", 2, "Neither the input `x` nor the block's parameters are changed by "
              "forward or backward.",
              checks.all_of(
                  checks.holds("x unchanged", FORWARD_BACKWARD, "Your block changed the caller's `x` in place"),
                  checks.holds("parameters unchanged", FORWARD_BACKWARD, "Your block changed its own parameters "
                               "(qkv or proj) in forward or backward; scale q, a new tensor, instead")),
              public=True),
    ),
)
