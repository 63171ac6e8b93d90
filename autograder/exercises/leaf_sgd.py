"""The exercise leaf_sgd: `w -= lr * w.grad` on a leaf that requires grad.

Autograd refuses in-place changes to a leaf it records, so a hand-written SGD step must step outside
the recording (`torch.no_grad()`) while still changing the same tensor, in place, visibly to autograd
(its version counter moves: no `.data`). The checks look at the caller's own tensor objects.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import checks, probes
from ..evidence import Evidence
from ..spec import LEAF_INPLACE_ERROR, PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict

PARAM, COEF = Family("param"), Family("coef")
"""Inputs: each tensor's start value and its coefficient in the loss (`param p0`, `coef p0`)."""

VALUE_AFTER = {1: Family("value 1"), 2: Family("value 2")}
"""Each parameter's value after the first step and after the second (`value 1 p0`)."""
SAME_OBJECT = Family("same object")
"""After the first step, per parameter: the caller's tensor, in its own storage."""
VERSION_ADVANCED = Family("version advanced")
"""After the first step, per parameter: its version counter moved."""
LEAF = Family("leaf")
"""After the first step, per parameter: still a leaf that requires grad."""
GRAD_CLEARED = Family("grad cleared")
"""After the first step, per parameter: its .grad is None or zeros."""
STEPS_WRITE = (*VALUE_AFTER.values(), SAME_OBJECT, VERSION_ADVANCED, LEAF, GRAD_CLEARED)


def _draw_tensors(shapes: tuple[tuple[int, ...], ...]):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        inputs: dict[str, Any] = {"lr": 0.05 + 0.4 * torch.rand((), generator=g, dtype=torch.float64).item()}
        for i, shape in enumerate(shapes):
            inputs[PARAM.key(f"p{i}")] = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
            inputs[COEF.key(f"p{i}")] = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        return inputs

    return draw


def _run_tensors(ns, inputs, device, obs):
    params = {n: t.requires_grad_(True) for n, t in PARAM.members(inputs).items()}

    def loss() -> torch.Tensor:
        return sum((inputs[COEF.key(n)] * torch.tanh(p)).sum() + 0.5 * (p * p).sum() for n, p in params.items())

    _two_steps(ns["sgd_step"], params, loss, inputs["lr"], obs)


def _draw_linear(sizes: tuple[int, ...], batch: int):
    template = nn.Sequential(*(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])))

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "lr": 0.05 + 0.4 * torch.rand((), generator=g, dtype=torch.float64).item(),
            "sizes": ",".join(map(str, sizes)),
            "x": torch.randn(batch, sizes[0], generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(batch, sizes[-1], generator=g, dtype=torch.float64).to(dtype),
            **probes.draw_state(template, g, dtype),
        }

    return draw


def _run_linear(ns, inputs, device, obs):
    sizes = [int(s) for s in inputs["sizes"].split(",")]
    model = probes.build(lambda: nn.Sequential(*(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))),
                         (), inputs, device, inputs["x"].dtype)
    params = dict(model.named_parameters())

    def loss() -> torch.Tensor:
        return (model(inputs["x"]) * inputs["grad_output"]).sum()

    _two_steps(ns["sgd_step"], params, loss, inputs["lr"], obs)


def _two_steps(step, params: dict[str, torch.Tensor], loss, lr: float, obs) -> None:
    """forward, backward, step; twice. Observes the caller's own tensor objects after each step."""
    for k in (1, 2):
        loss().backward()
        before = {n: (p._version, p.data_ptr()) for n, p in params.items()}
        given = list(params.values())
        step(given, lr)
        for (n, p), held in zip(params.items(), given):
            obs[VALUE_AFTER[k].key(n)] = p.detach().clone()
            if k == 1:
                obs[SAME_OBJECT.key(n)] = held is p and p.data_ptr() == before[n][1]
                obs[VERSION_ADVANCED.key(n)] = p._version > before[n][0]
                obs[LEAF.key(n)] = p.is_leaf and p.requires_grad
                obs[GRAD_CLEARED.key(n)] = p.grad is None or not bool(p.grad.ne(0).any())


def _each_holds(family: Family, scenarios: tuple[str, ...], failure: str) -> Rule:
    """Every parameter's boolean in `family` is True; says which parameter failed."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair, key in ev.observations():
            if key not in pair.got.values:
                return checks.missing(ev, pair, key)
            if pair.got.values[key] is not True:
                name = f"parameter `{family.member(key)}`"
                return checks.failed(f"{failure} ({name}, in {pair.label}).",
                                     f"{failure} ({name})" if ev.observed_publicly(key) else failure)
        return PASS

    return Rule(evaluate, scenarios, (family,))


PUBLIC, TENSORS, LINEAR = "public", "tensors", "linear layers"
ALL = (PUBLIC, TENSORS, LINEAR)

EXERCISE = Exercise(
    id="leaf_sgd",
    number=1,
    title="The leaf update",
    defines=(Symbol("sgd_step", "function", ("params", "lr")),),
    failure=ExpectedError("RuntimeError", LEAF_INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _draw_tensors(((3,), (2, 3))), _run_tensors, STEPS_WRITE, public=True),
        Scenario(TENSORS, _draw_tensors(((5,), (4, 3), (2, 3, 2), ())), _run_tensors, STEPS_WRITE),
        Scenario(LINEAR, _draw_linear((4, 5, 3), 6), _run_linear, STEPS_WRITE),
    ),
    checks=(
        Check("values", 3, "After one step every parameter holds p - lr * p.grad.",
              checks.matches_reference((VALUE_AFTER[1],), "Parameter after one step"), public=True),
        Check("same tensors", 2, "The caller's parameter objects are updated themselves, in their own storage "
              "(not replaced by new tensors).",
              _each_holds(SAME_OBJECT, ALL, "The caller's parameter was replaced by a new tensor or moved to "
                          "new storage; update it in place"), public=True),
        Check("version advanced", 1, "The update is visible to autograd: each parameter's version counter "
              "moves (`.data` hides the change from it).",
              _each_holds(VERSION_ADVANCED, ALL, "The parameter's version counter did not move, so autograd "
                          "cannot see the update (was it made through `.data`, or not made at all?)"), public=True),
        Check("still a leaf", 1, "Each parameter is still a leaf with requires_grad=True after the step.",
              _each_holds(LEAF, ALL, "After the step the parameter is no longer a leaf that requires grad"),
              public=True),
        Check("grad cleared", 1, "Each parameter's .grad is None or all zeros after the step.",
              _each_holds(GRAD_CLEARED, ALL, "The gradient was not cleared after the step, so the next "
                          "backward adds to it"), public=True),
        Check("two steps", 2, "A second forward, backward and step works and gives the values of two SGD steps.",
              checks.matches_reference((VALUE_AFTER[2],), "Parameter after two steps", (TENSORS, LINEAR))),
    ),
)
