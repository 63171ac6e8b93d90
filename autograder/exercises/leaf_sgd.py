"""The exercise leaf_sgd: SGD with momentum and weight decay, written by hand, on leaves that require grad.

The step as first written, `d_p = p.grad + weight_decay * p; buf.mul_(momentum).add_(d_p); p -= lr * buf`,
stops at its last line: autograd refuses an in-place change of a leaf it records. On the way it has already
given the momentum buffer a history (`weight_decay * p` is recorded, so `buf` becomes the output of an add),
a graph that grows by a few nodes at every step and is never freed. The step must run outside the recording
(`torch.no_grad()`) and still change the caller's own tensors, in place, visibly to autograd (their version
counters move: no `.data`). Values are compared with `torch.optim.SGD(momentum=, weight_decay=)` (the
reference), after one step and after three; the checks look at the caller's own tensor objects. Hidden
parameters are drawn per salt in number and shape (a scalar among them), and one scenario hands the step
non-contiguous parameters and buffers (transposed and strided views, as a model's tied or sliced weights
are): the contract allows any leaf. Nothing counts until the parameters hold SGD's values (the gate).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .. import probes
from ..core import checks
from ..core.evidence import Evidence
from ..core.messages import LEAF_INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from . import _contract as contract

PARAM, COEF, START = Family("param"), Family("coef"), Family("momentum")
"""Inputs: each parameter's start value, its coefficient in the loss, its momentum buffer's start value
(`param p0`, `coef p0`, `momentum p0`)."""

STEPS = 3
VALUE_AFTER = {k: Family(f"value {k}") for k in range(1, STEPS + 1)}
"""Each parameter's value after step k (`value 1 p0`)."""
BUFFER_AFTER = {1: Family("buffer 1"), STEPS: Family(f"buffer {STEPS}")}
"""Each momentum buffer's value after the first step and after the last (`buffer 1 p0`)."""
SAME_OBJECT = Family("same object")
"""After every step, per parameter: the caller's parameter and buffer objects, in their own storage, are
the ones in the lists the step was given."""
VERSION_ADVANCED = Family("version advanced")
"""After every step, per parameter: its version counter moved."""
LEAF = Family("leaf")
"""After every step, per parameter: still a leaf that requires grad."""
NO_HISTORY = Family("buffer without history")
"""After every step, per buffer: no grad_fn, no requires_grad (nothing recorded into it)."""
GRAD_NONE = Family("grad none")
"""After every step, per parameter: its .grad is None."""
STEPS_WRITE = (*VALUE_AFTER.values(), *BUFFER_AFTER.values(), SAME_OBJECT, VERSION_ADVANCED, LEAF, NO_HISTORY,
               GRAD_NONE)


def _hyper(g: torch.Generator, weight_decay: bool = True) -> dict[str, float]:
    def uniform(low: float, high: float) -> float:
        return low + (high - low) * torch.rand((), generator=g, dtype=torch.float64).item()

    return {"lr": uniform(0.05, 0.3), "momentum": uniform(0.5, 0.95),
            "weight_decay": uniform(0.01, 0.2) if weight_decay else 0.0}


def _shapes(g: torch.Generator, low: int) -> tuple[tuple[int, ...], ...]:
    """A scalar and one to three parameters of one to three dimensions, each of size `low` to 5."""
    count = int(torch.randint(2, 5, (), generator=g))
    dims = [0, *torch.randint(1, 4, (count - 1,), generator=g).tolist()]
    return tuple(tuple(torch.randint(low, 6, (d,), generator=g).tolist()) for d in dims)


def _draw_tensors(shapes: tuple[tuple[int, ...], ...] | None, weight_decay: bool = True, low: int = 1):
    """shapes None: drawn per salt (_shapes), each size at least `low`."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        inputs: dict[str, Any] = _hyper(g, weight_decay)
        for i, shape in enumerate(shapes if shapes is not None else _shapes(g, low)):
            for family in (PARAM, COEF, START):  # a buffer left by earlier steps: not zeros
                inputs[family.key(f"p{i}")] = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        return inputs

    return draw


def _strided(t: torch.Tensor) -> torch.Tensor:
    """A non-contiguous tensor with t's shape and values: the transpose of a transposed copy for two or more
    dimensions, every other entry of a doubled copy for one (a scalar stays as it is)."""
    if t.dim() >= 2:
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    if t.dim() == 1:
        return t.repeat_interleave(2)[::2]
    return t


def _run_tensors(ns, inputs, device, obs):
    params = {n: t.requires_grad_(True) for n, t in PARAM.members(inputs).items()}
    buffers = {n: START.members(inputs)[n] for n in params}
    _tensor_steps(ns, inputs, obs, params, buffers)


def _run_strided(ns, inputs, device, obs):
    """The same steps on non-contiguous parameters and buffers (each a leaf view of a private copy)."""
    params = {n: _strided(t).requires_grad_(True) for n, t in PARAM.members(inputs).items()}
    buffers = {n: _strided(START.members(inputs)[n]) for n in params}
    _tensor_steps(ns, inputs, obs, params, buffers)


def _tensor_steps(ns, inputs, obs, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor]) -> None:
    def loss() -> torch.Tensor:
        return sum((inputs[COEF.key(n)] * torch.tanh(p)).sum() + 0.5 * (p * p).sum() for n, p in params.items())

    _steps(ns["sgd_step"], params, buffers, loss, inputs, obs)


def _draw_linear(sizes: tuple[int, ...], batch: int):
    template = nn.Sequential(*(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])))

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            **_hyper(g),
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
    buffers = {n: torch.zeros_like(p) for n, p in params.items()}  # the start of training

    def loss() -> torch.Tensor:
        return (model(inputs["x"]) * inputs["grad_output"]).sum()

    _steps(ns["sgd_step"], params, buffers, loss, inputs, obs)


def _steps(step, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor], loss, inputs, obs) -> None:
    """forward, backward, step; STEPS times. Observes the caller's own tensor objects after each step (the
    booleans hold only if they held after every step so far)."""
    for k in range(1, STEPS + 1):
        loss().backward()
        before = {n: (p._version, p.data_ptr(), buffers[n].data_ptr()) for n, p in params.items()}
        given_params, given_buffers = list(params.values()), list(buffers.values())
        step(given_params, given_buffers, inputs["lr"], inputs["momentum"], inputs["weight_decay"])
        for (n, p), held, held_buffer in zip(params.items(), given_params, given_buffers):
            buf = buffers[n]
            obs[VALUE_AFTER[k].key(n)] = p.detach().clone()
            if k in BUFFER_AFTER:
                obs[BUFFER_AFTER[k].key(n)] = buf.detach().clone()
            found = {
                SAME_OBJECT: held is p and held_buffer is buf and p.data_ptr() == before[n][1]
                and buf.data_ptr() == before[n][2],
                VERSION_ADVANCED: p._version > before[n][0],
                LEAF: all(t.is_leaf and t.requires_grad for t in (p, held)),
                NO_HISTORY: all(t.grad_fn is None and not t.requires_grad for t in (buf, held_buffer)),
                GRAD_NONE: p.grad is None,
            }
            for family, value in found.items():
                obs[family.key(n)] = bool(value) and obs.get(family.key(n), True)


def _each_holds(family: Family, scenarios: tuple[str, ...], failure: str, buffer: bool = False) -> Rule:
    """Every parameter's boolean in `family` is True; says which parameter failed (or whose buffer: `buffer`)."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair, key in ev.observations():
            if key not in pair.got.values:
                return checks.missing(ev, pair, key)
            if pair.got.values[key] is not True:
                member = family.member(key)
                name = (exercise_say("the buffer of parameter `{member}`", member=member) if buffer
                        else exercise_say("parameter `{member}`", member=member))
                return checks.failed(exercise_say("{failure} ({what}, in {trial}).", failure=failure, what=name,
                                                  trial=pair.label),
                                     exercise_say("{failure} ({what})", failure=failure, what=name)
                                     if ev.observed_publicly(key) else failure)
        return PASS

    return Rule(evaluate, scenarios, (family,))


PUBLIC, TENSORS, LINEAR, NO_DECAY = "public", "tensors", "linear layers", "no weight decay"
STRIDED = "non-contiguous tensors"
ALL = (PUBLIC, TENSORS, LINEAR, NO_DECAY, STRIDED)
HIDDEN = (TENSORS, LINEAR, NO_DECAY, STRIDED)
VALUES = checks.matches_reference((VALUE_AFTER[1],), "Parameter after one step")
NEEDS = "every parameter must first hold what torch.optim.SGD gives after one step (the check `values`)"

EXERCISE = Exercise(
    id="leaf_sgd",
    number=1,
    title="The leaf update",
    defines=(Symbol("sgd_step", "function", ("params", "buffers", "lr", "momentum", "weight_decay")),),
    failure=ExpectedError("RuntimeError", LEAF_INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _draw_tensors(((3,), (2, 3))), _run_tensors, STEPS_WRITE, public=True),
        Scenario(TENSORS, _draw_tensors(None), _run_tensors, STEPS_WRITE),
        Scenario(LINEAR, _draw_linear((4, 5, 3), 6), _run_linear, STEPS_WRITE),
        Scenario(NO_DECAY, _draw_tensors(None, weight_decay=False), _run_tensors, STEPS_WRITE),
        Scenario(STRIDED, _draw_tensors(None, low=2), _run_strided, STEPS_WRITE),
    ),
    checks=checks.gate_checks(
        VALUES, NEEDS,
        Check("values", 3, "After one step every parameter holds what torch.optim.SGD(lr, momentum, "
              "weight_decay) gives: p - lr * (momentum * buf + p.grad + weight_decay * p).", VALUES, public=True),
        Check("several steps", 2, f"After {STEPS} forward, backward and step rounds every parameter and momentum "
              "buffer holds what torch.optim.SGD gives.",
              checks.matches_reference((VALUE_AFTER[STEPS], BUFFER_AFTER[STEPS]),
                                       f"After {STEPS} steps", HIDDEN)),
        Check("same tensors", 1, "The caller's parameter and buffer objects are updated themselves, in their own "
              "storage (not replaced by new tensors).",
              _each_holds(SAME_OBJECT, ALL, "The caller's parameter or its momentum buffer was replaced by a new "
                          "tensor or moved to new storage; update both in place"), public=True),
        Check("version advanced", 1, "The update is visible to autograd: each parameter's version counter "
              "moves at every step (`.data` hides the change from it).",
              _each_holds(VERSION_ADVANCED, ALL, "The parameter's version counter did not move, so autograd "
                          "cannot see the update (was it made through `.data`, or not made at all?)"), public=True),
        Check("still leaves", 1, "Each parameter is still a leaf with requires_grad=True after every step.",
              _each_holds(LEAF, ALL, "After the step the parameter is no longer a leaf that requires grad"),
              public=True),
        Check("momentum buffers", 1, "After one step each buffer holds momentum * buf + p.grad + weight_decay * p, "
              "and no buffer ever carries autograd history (no grad_fn, requires_grad False).",
              checks.all_of(
                  checks.matches_reference((BUFFER_AFTER[1],), "Momentum buffer after one step"),
                  _each_holds(NO_HISTORY, ALL, "A momentum buffer carries autograd history (a grad_fn): the "
                              "buffer was computed while autograd was recording, so every step adds to a graph "
                              "that is never freed; compute it under torch.no_grad()", buffer=True),
              ), public=True),
        Check("grads cleared", 1, "Each parameter's .grad is None after the step, as optimizer.zero_grad() "
              "leaves it by default since torch 2.0.",
              _each_holds(GRAD_NONE, ALL, "The parameter's .grad is still a tensor after the step (left as it "
                          "was, or zeroed): set it to None with `p.grad = None`, which is what "
                          "optimizer.zero_grad() does by default since torch 2.0"), public=True),
    ),
)

CONTRACT = contract.Contract("sgd_step", (
    contract.Dimension(contract.GRADS_AT_ENTRY, ("non-zero",), "`params` is a list of leaves that require grad and "
                       "have a `.grad` (a model's parameters)"),
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "the contract allows any leaf"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
    contract.Dimension(contract.CALLS, ("several",), "after one step and after three"),
))
"""The situations the notebook lets `sgd_step` meet (tests/test_contracts_spanned.py measures them)."""
