"""Small helpers that scenarios share: drawing module states, building modules, observing grads; and the
families of names they write."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from .core.spec import Family
from .feedback.wording import say

STATE = Family("state")
"""Inputs: a module's drawn parameters and buffers, `state <name>`."""
GRAD = Family("grad")
"""Observations: the gradient of a parameter or an input (`grad conv1.weight`, `grad x`), or why it has none."""
BUFFER = Family("buffer")
"""Observations: a module's buffer after the run (`buffer bn1.running_mean`)."""


def draw_state(template: nn.Module, generator: torch.Generator, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Random parameters and buffers shaped like `template`'s, as inputs in the STATE family."""
    state = {}
    for name, t in template.state_dict().items():
        if not t.is_floating_point():
            state[STATE.key(name)] = t.clone()
        elif name.endswith("running_var"):
            state[STATE.key(name)] = (torch.rand(t.shape, generator=generator, dtype=torch.float64) + 0.5).to(dtype)
        else:
            fan_in = t[0].numel() if t.dim() > 1 else max(t.numel(), 1)
            scale = 1.0 / math.sqrt(fan_in) if t.dim() > 1 else 0.5
            state[STATE.key(name)] = (torch.randn(t.shape, generator=generator, dtype=torch.float64) * scale).to(dtype)
    return state


def build(factory: Callable[..., nn.Module], args: tuple, inputs: Mapping[str, Any], device: torch.device,
          dtype: torch.dtype) -> nn.Module:
    """Calls the (student's or reference) class and loads the drawn state into it, strictly."""
    module = factory(*args)
    module = module.to(device=device, dtype=dtype)
    module.load_state_dict(STATE.members(inputs), strict=True)
    return module


def backward_with(out: Any, grad: torch.Tensor) -> None:
    """`out.backward(grad)`, taken as the gradient of the scalar <out, grad>: the same gradients, bit for bit
    (the sum's backward gives ones, the product's ones * grad), without what torch imports for a tensor of
    output gradients (its symbolic shapes, with sympy: about 0.3 s in every fresh worker and grader).
    Where `out` is not a tensor of grad's shape, torch's own call, for torch's own error."""
    if not isinstance(out, torch.Tensor) or out.shape != grad.shape:
        out.backward(grad)
        return
    (out * grad).sum().backward()


def observe_grad(obs: dict[str, Any], name: str, tensor: torch.Tensor) -> None:
    """Records `tensor`'s gradient as GRAD.key(name), or a note that it has none."""
    obs[GRAD.key(name)] = tensor.grad if tensor.grad is not None else say("run: no gradient", tensor=name)


def observe_grads(obs: dict[str, Any], module: nn.Module) -> None:
    """Records each parameter's gradient (observe_grad)."""
    for name, p in module.named_parameters():
        observe_grad(obs, name, p)


def observe_buffers(obs: dict[str, Any], module: nn.Module) -> None:
    for name, b in module.named_buffers():
        obs[BUFFER.key(name)] = b
