"""Small helpers that scenarios share: drawing module states, building modules, observing grads."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

STATE = "state "
"""Prefix of the inputs that hold a module's parameters and buffers."""


def draw_state(template: nn.Module, generator: torch.Generator, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Random parameters and buffers shaped like `template`'s, as inputs named "state <name>"."""
    state = {}
    for name, t in template.state_dict().items():
        if not t.is_floating_point():
            state[STATE + name] = t.clone()
        elif name.endswith("running_var"):
            state[STATE + name] = (torch.rand(t.shape, generator=generator, dtype=torch.float64) + 0.5).to(dtype)
        else:
            fan_in = t[0].numel() if t.dim() > 1 else max(t.numel(), 1)
            scale = 1.0 / math.sqrt(fan_in) if t.dim() > 1 else 0.5
            state[STATE + name] = (torch.randn(t.shape, generator=generator, dtype=torch.float64) * scale).to(dtype)
    return state


def build(factory: Callable[..., nn.Module], args: tuple, inputs: Mapping[str, Any], device: torch.device,
          dtype: torch.dtype) -> nn.Module:
    """Calls the (student's or reference) class and loads the drawn state into it, strictly."""
    module = factory(*args)
    state = {k[len(STATE):]: v for k, v in inputs.items() if k.startswith(STATE)}
    module = module.to(device=device, dtype=dtype)
    module.load_state_dict(state, strict=True)
    return module


def observe_grads(obs: dict[str, Any], module: nn.Module) -> None:
    """Records each parameter's gradient as "grad <name>", or a note that it has none."""
    for name, p in module.named_parameters():
        obs[f"grad {name}"] = p.grad if p.grad is not None else f"`{name}` got no gradient (its .grad is None)"


def observe_buffers(obs: dict[str, Any], module: nn.Module) -> None:
    for name, b in module.named_buffers():
        obs[f"buffer {name}"] = b


FD_EPS = 1e-6
"""Step of the central differences, float64, as torch.autograd.gradcheck uses."""
FD_DIRECTIONS = 3
"""Random directions probed (torch's fast-mode gradcheck probes one; three make a fluke unlikely)."""

_grad = torch.autograd.grad  # bound before any answer code runs: a submission's monkeypatch cannot reach it


def _flat(out: Any) -> torch.Tensor:
    parts = out if isinstance(out, (tuple, list)) else (out,)
    return torch.cat([torch.Tensor.reshape(p, (-1,)) for p in parts])


def observe_gradcheck(obs: dict[str, Any], fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> None:
    """Raw material for a gradient check judged in the grader, not here (where torch may be patched).

    For a few random directions u (one per input) and output weights v, records f(x + eps u),
    f(x - eps u), v, u and the analytic vector-Jacobian product (the gradient of <v, f(x)>). The
    grader then compares <v, (f+ - f-) / 2 eps> with sum_i <grad_i, u_i>. Errors of backward propagate.
    """
    generator = torch.Generator().manual_seed(20260)
    base = [t.detach() for t in inputs]
    for k in range(FD_DIRECTIONS):
        us = [torch.randn(t.shape, generator=generator, dtype=t.dtype).to(t.device) for t in base]
        obs[f"fd {k} plus"] = _flat(fn(*[b + FD_EPS * u for b, u in zip(base, us)])).detach()
        obs[f"fd {k} minus"] = _flat(fn(*[b - FD_EPS * u for b, u in zip(base, us)])).detach()
        xs = [b.clone().requires_grad_(True) for b in base]
        out = _flat(fn(*xs))
        v = torch.randn(out.shape, generator=generator, dtype=out.dtype).to(out.device)
        grads = _grad(out, xs, v, allow_unused=True)
        obs[f"fd {k} v"] = v
        for i, (u, g) in enumerate(zip(us, grads)):
            obs[f"fd {k} u {i}"] = u
            obs[f"fd {k} grad {i}"] = torch.zeros_like(u) if g is None else g
