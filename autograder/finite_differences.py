"""A gradient check by finite differences, in two halves that share their names and numbers.

`observe` runs where the code under test runs (a worker, where torch may have been patched by a submission)
and only records raw values; `agree` judges them in the grader, so patching torch.autograd.gradcheck or
allclose gains nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .core.checks import Tolerance, missing
from .core.evidence import Evidence, failed
from .core.spec import PASS, Family, Rule, Verdict
from .feedback.wording import say

EPS = 1e-6
"""Step of the central differences, float64, as torch.autograd.gradcheck uses."""
DIRECTIONS = 3
"""Random directions probed (torch's fast-mode gradcheck probes one; three make a fluke unlikely)."""
TOLERANCE = Tolerance(1e-3, 1e-5)  # torch.autograd.gradcheck's defaults for float64

OBSERVED = Family("fd")
"""What `observe` writes, per direction k: `fd k plus`, `fd k minus` (f(x ± eps u), flattened), `fd k v` (the
output weights) and, per input i, `fd k u i` (its direction) and `fd k grad i` (its gradient of <v, f(x)>)."""

_grad = torch.autograd.grad  # bound before any answer code runs: a submission's monkeypatch cannot reach it


def _flat(out: Any) -> torch.Tensor:
    parts = out if isinstance(out, (tuple, list)) else (out,)
    return torch.cat([torch.Tensor.reshape(p, (-1,)) for p in parts])


def observe(obs: dict[str, Any], fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> None:
    """For a few random directions u (one per input) and output weights v, records f(x + eps u),
    f(x - eps u), v, u and the analytic vector-Jacobian product. Errors of backward propagate."""
    generator = torch.Generator().manual_seed(20260)
    base = [t.detach() for t in inputs]
    for k in range(DIRECTIONS):
        us = [torch.randn(t.shape, generator=generator, dtype=t.dtype).to(t.device) for t in base]
        obs[OBSERVED.key(k, "plus")] = _flat(fn(*[b + EPS * u for b, u in zip(base, us)])).detach()
        obs[OBSERVED.key(k, "minus")] = _flat(fn(*[b - EPS * u for b, u in zip(base, us)])).detach()
        xs = [b.clone().requires_grad_(True) for b in base]
        out = _flat(fn(*xs))
        v = torch.randn(out.shape, generator=generator, dtype=out.dtype).to(out.device)
        # the gradient of the scalar <v, f(x)>, not grad(out, xs, v): a tensor of output weights makes torch
        # import its symbolic-shapes module (sympy, about 0.3 s) in every fresh worker; the product is the same
        grads = _grad((out * v).sum(), xs, allow_unused=True)
        obs[OBSERVED.key(k, "v")] = v
        for i, (u, g) in enumerate(zip(us, grads)):
            obs[OBSERVED.key(k, "u", i)] = u
            obs[OBSERVED.key(k, "grad", i)] = torch.zeros_like(u) if g is None else g


def _at(values: dict[str, Any], *name: object) -> torch.Tensor:
    return values[OBSERVED.key(*name)].double()


def agree(scenarios: tuple[str, ...], failure: str) -> Rule:
    """In every trial of these scenarios, <v, (f+ - f-) / 2 eps> equals sum_i <grad_i, u_i> along each
    direction `observe` probed, within TOLERANCE; `failure` says what a miss means."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            values = pair.got.values
            for k in range(DIRECTIONS):
                if OBSERVED.key(k, "v") not in values:
                    return missing(ev, pair, "gradcheck", say("run: gradient check"))
                slope = (_at(values, k, "plus") - _at(values, k, "minus")) / (2 * EPS)
                numeric = float((slope * _at(values, k, "v")).sum())
                analytic, i = 0.0, 0
                while OBSERVED.key(k, "u", i) in values:
                    analytic += float((_at(values, k, "grad", i) * _at(values, k, "u", i)).sum())
                    i += 1
                if not abs(numeric - analytic) <= TOLERANCE.atol + TOLERANCE.rtol * abs(numeric):
                    return failed(say("run: gradient check failed", failure=failure, trial=pair.label,
                                      numeric=numeric, analytic=analytic), failure)
        return PASS

    return Rule(evaluate, scenarios, (OBSERVED,))
