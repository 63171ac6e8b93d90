"""Issue 29 §1: the hidden scenarios span the whole contract.

Each exercise module declares its contract's dimensions as data (`CONTRACT`, autograder/exercises/_contract.py):
for each dimension (train or eval mode, grad mode, gradients at entry, layout, dtype, hooks, repeated calls,
optimizer kinds, gradient magnitude), the values its notebook's text allows. This file measures which values the
scenarios of a grading actually put the code in: it runs every scenario, drawn under several salts, with the
reference, and watches each call of the contract's symbol (the reference's class, its instances' forward; or
its function) for the state of what it is handed. No scenario lists what it reaches: what is reached is seen.
Every allowed value must be reached (a wrong answer that is wrong only where no scenario goes would score full
marks), and nothing outside the allowed values (a scenario outside the contract would fail a right answer).
"""

from __future__ import annotations

import functools
import importlib
from collections import defaultdict
from typing import Any

import pytest
import torch
from torch import nn

from autograder.exercises import EXERCISES
from autograder.exercises import _contract as c
from autograder.reference_store import load_reference
from autograder.trials import derive_seed

SALTS = ("contracts 1", "contracts 2", "contracts 3")


def contract_of(exercise_id: str) -> c.Contract:
    module = importlib.import_module(f"autograder.exercises.{exercise_id}")
    contract = getattr(module, "CONTRACT", None)
    assert isinstance(contract, c.Contract), f"autograder/exercises/{exercise_id}.py declares no CONTRACT"
    return contract


def _reference(exercise_id: str) -> dict[str, Any]:
    return dict(load_reference(exercise_id))


class _Seen:
    """What the watched calls of one scenario met: dimension -> values."""

    def __init__(self) -> None:
        self.values: dict[str, set[str]] = defaultdict(set)
        self.calls: dict[int, int] = defaultdict(int)
        self._hooked: set[int] = set()
        self._first = True

    def add(self, dimension: str, value: str) -> None:
        self.values[dimension].add(value)

    def call(self, owner: object, args: tuple[Any, ...], kwargs: dict[str, Any], model: nn.Module | None) -> None:
        self.calls[id(owner)] += 1
        self._first = self.calls[id(owner)] == 1  # gradients at entry: what the caller hands in, before any call
        if torch.is_inference_mode_enabled():
            self.add(c.GRAD_MODE, "inference")
        else:
            self.add(c.GRAD_MODE, "enabled" if torch.is_grad_enabled() else "no_grad")
        if model is not None:
            self._module(model, grads=False)
        for value in (*args, *kwargs.values()):
            self._value(value, model is None)

    def _value(self, value: Any, grads: bool, depth: int = 0) -> None:
        if isinstance(value, nn.Module):
            self._module(value, grads)
        elif isinstance(value, torch.optim.Optimizer):
            self._optimizer(value)
        elif isinstance(value, torch.Tensor):
            self._tensor(value, grads)
        elif isinstance(value, (list, tuple)) and depth < 2:
            for item in value:
                self._value(item, grads, depth + 1)

    def _tensor(self, t: torch.Tensor, grads: bool) -> None:
        self.add(c.LAYOUT, "contiguous" if t.is_contiguous() else "not contiguous")
        if t.is_floating_point():
            self.add(c.DTYPE, str(t.dtype).removeprefix("torch."))
        if grads and t.is_leaf and t.requires_grad:
            self._grads([t])

    def _grads(self, params: list[torch.Tensor]) -> None:
        if not self._first:  # after a first call they are what the code under test left
            return
        held = [p.grad for p in params if p.grad is not None]
        if params:
            self.add(c.GRADS_AT_ENTRY, "none" if not held else
                     "non-zero" if any(bool(g.ne(0).any()) for g in held) else "zero")

    def _module(self, module: nn.Module, grads: bool) -> None:
        self.add(c.MODE, "train" if module.training else "eval")
        if grads:
            self._grads(list(module.parameters()))
        kinds = set()
        for m in module.modules():
            if m._backward_hooks:
                kinds.add("full backward")
            if m._backward_pre_hooks:
                kinds.add("full backward pre")
        if nn.modules.module._global_backward_hooks:
            kinds.add("global full backward")
        for kind in kinds or {"none"}:
            self.add(c.HOOKS, kind)

    def _optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        self.add(c.OPTIMIZER, type(optimizer).__name__)
        self._grads([p for group in optimizer.param_groups for p in group["params"]])
        if id(optimizer) in self._hooked:
            return
        self._hooked.add(id(optimizer))

        latest: dict[int, float] = {}  # parameter -> the norm of its .grad when backward last wrote it

        def accumulated(p: torch.Tensor) -> None:
            latest[id(p)] = float(p.grad.detach().double().norm())

        def norm(opt, args, kwargs):
            """At a step: the norm of the gradients backward left, before anything (a clipping) changed them."""
            total = sum(v * v for v in latest.values()) ** 0.5
            latest.clear()
            self.add(c.GRAD_NORM, "above 1" if total > 1 else "at most 1")

        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.requires_grad:
                    p.register_post_accumulate_grad_hook(accumulated)
        optimizer.register_step_pre_hook(norm)


def _watched(reference: dict[str, Any], symbol: str, seen: _Seen) -> dict[str, Any]:
    """The reference's namespace, `symbol` watched: a subclass whose forward records, or a recording wrapper."""
    ns = dict(reference)
    target = ns[symbol]
    if isinstance(target, type) and issubclass(target, nn.Module):
        class Watched(target):  # type: ignore[misc, valid-type]
            def forward(self, *args, **kwargs):
                seen.call(self, args, kwargs, model=self)
                return super().forward(*args, **kwargs)

        Watched.__name__ = Watched.__qualname__ = target.__name__
        ns[symbol] = Watched
    else:
        @functools.wraps(target)
        def watched(*args, **kwargs):
            seen.call(watched, args, kwargs, model=None)
            return target(*args, **kwargs)

        ns[symbol] = watched
    return ns


def measure(exercise_id: str, salt: str) -> dict[str, dict[str, set[str]]]:
    """Scenario -> dimension -> the values the watched symbol met, every scenario and dtype run with the reference
    on inputs drawn under `salt`."""
    exercise, contract = EXERCISES[exercise_id], contract_of(exercise_id)
    reference = _reference(exercise_id)
    found: dict[str, dict[str, set[str]]] = {}
    for scenario in exercise.scenarios:
        seen = _Seen()
        for dtype in scenario.dtypes:
            g = torch.Generator().manual_seed(derive_seed(salt, exercise_id, scenario.name, str(dtype)))
            inputs = scenario.draw(g, dtype)
            torch.manual_seed(derive_seed(salt, scenario.name))
            scenario.run(_watched(reference, contract.symbol, seen), inputs, torch.device("cpu"), {})
        if seen.calls:
            seen.add(c.CALLS, "several" if max(seen.calls.values()) > 1 else "one")
        found[scenario.name] = dict(seen.values)
    return found


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_the_contract_is_declared(exercise_id):
    contract = contract_of(exercise_id)
    symbols = {s.name for s in EXERCISES[exercise_id].defines}
    assert contract.symbol in symbols, f"{exercise_id}: CONTRACT watches {contract.symbol!r}, not one of {symbols}"


@pytest.mark.parametrize("salt", SALTS)
@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_scenarios_span_the_contract(exercise_id, salt):
    """Every value the contract allows is reached by some scenario of a grading; none it does not allow."""
    allowed = contract_of(exercise_id).allowed()
    found = measure(exercise_id, salt)
    reached: dict[str, set[str]] = defaultdict(set)
    for values in found.values():
        for dimension, got in values.items():
            reached[dimension] |= got
    unreached = {d: sorted(set(v) - reached[d]) for d, v in allowed.items() if set(v) - reached[d]}
    assert not unreached, f"{exercise_id}: allowed values no scenario reaches: {unreached}"
    outside = {d: sorted(reached[d] - set(v)) for d, v in allowed.items() if reached[d] - set(v)}
    assert not outside, f"{exercise_id}: scenarios reach values the contract does not allow: {outside}"


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_hidden_scenarios_reach_what_public_ones_do_not(exercise_id):
    """The values the contract allows beyond what the public scenarios show are reached by hidden ones: the
    public data does not tell a student which corners are graded, and the hidden set is not a subset."""
    exercise = EXERCISES[exercise_id]
    found = measure(exercise_id, SALTS[0])
    hidden: dict[str, set[str]] = defaultdict(set)
    for name, values in found.items():
        if not exercise.scenario(name).public:
            for dimension, got in values.items():
                hidden[dimension] |= got
    allowed = contract_of(exercise_id).allowed()
    unreached = {d: sorted(set(v) - hidden[d]) for d, v in allowed.items() if set(v) - hidden[d]}
    assert not unreached, f"{exercise_id}: allowed values only public scenarios reach: {unreached}"
