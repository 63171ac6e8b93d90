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


def gradcheck_passes(fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...]) -> bool:
    """float64 finite differences against the analytic gradient; errors of backward propagate."""
    return bool(torch.autograd.gradcheck(fn, inputs, raise_exception=False, fast_mode=True))
