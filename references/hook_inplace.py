"""Reference of exercise 9, hook_inplace: Grad-CAM with a full backward hook, and an out-of-place ReLU after
the hooked layer.

A full backward hook makes model.target return a view that a custom autograd Function made; the ReLU after it
must make a new tensor (`torch.relu(out)`), never write into that view (`nn.ReLU(inplace=True)`, the bug).
"""

from __future__ import annotations

import torch
from torch import nn

from autograder.exercises.hook_inplace import EXERCISE, GradCAMNetLayout


class GradCAMNet(GradCAMNetLayout):
    """head(pool(relu(target(relu(conv(x)))))), the ReLU after target out of place."""

    def __init__(self, channels: int, classes: int):
        super().__init__(channels, classes)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.conv(x))  # no hook on conv: in place is fine here
        x = torch.relu(self.target(x))
        return self.head(self.pool(x).flatten(1))


def gradcam(model: nn.Module, x: torch.Tensor, target_class: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The Grad-CAM heatmap of `target_class` on model.target, (N, H, W), and the gradient its full backward
    hook captured: d score / d output of model.target, (N, C, H, W)."""
    captured = {}

    def keep_activation(module, inputs, output):
        captured["activation"] = output.detach()

    def keep_gradient(module, grad_input, grad_output):
        captured["gradient"] = grad_output[0].detach()

    handles = [model.target.register_forward_hook(keep_activation),
               model.target.register_full_backward_hook(keep_gradient)]
    try:
        model.zero_grad(set_to_none=True)
        scores = model(x)
        scores[:, target_class].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    weights = captured["gradient"].mean(dim=(2, 3), keepdim=True)
    heatmap = torch.relu((weights * captured["activation"]).sum(dim=1))
    return heatmap, captured["gradient"]


REFERENCE = {"GradCAMNet": GradCAMNet, "gradcam": gradcam}


# ---- Known submissions: graded by tests/exercises/test_catalogue.py, made into the sample class by
# samples/make_class.py, read with autograder.reference_store.known_submissions (see README.md here).

MODEL = """
import torch
import torch.nn.functional as F
from torch import nn


class GradCAMNet(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.target = nn.Conv2d(channels, channels, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.relu(self.conv(x))
        x = self.relu(self.target(x))
        x = self.pool(x).flatten(1)
        return self.head(x)
"""

GRADCAM = """

def gradcam(model, x, target_class):
    captured = {}

    def save_activation(module, inputs, output):
        captured["activation"] = output.detach()

    def save_gradient(module, grad_input, grad_output):
        captured["gradient"] = grad_output[0].detach()

    handles = [model.target.register_forward_hook(save_activation),
               model.target.register_full_backward_hook(save_gradient)]
    try:
        model.zero_grad()
        scores = model(x)
        scores[:, target_class].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    weights = captured["gradient"].mean(dim=(2, 3), keepdim=True)
    heatmap = torch.relu((weights * captured["activation"]).sum(dim=1))
    return heatmap, captured["gradient"]
"""

TARGET_LINE = "        x = self.relu(self.target(x))\n"
BROKEN = MODEL + GRADCAM


def model_with(line: str) -> str:
    """BROKEN's model with the line after the target layer replaced (indented like it), and its gradcam."""
    body = "".join(f"        {part}\n" for part in line.strip("\n").splitlines())
    return MODEL.replace(TARGET_LINE, body) + GRADCAM


def gradcam_with(old: str, new: str, model: str = MODEL) -> str:
    """`model`, and BROKEN's gradcam with `old` replaced by `new`."""
    assert old in GRADCAM, old
    return model + GRADCAM.replace(old, new)


FIXED = model_with("x = torch.relu(self.target(x))")
FIXED_MODEL = FIXED.removesuffix(GRADCAM)

CORRECT = {
    "torch.relu out of place": FIXED,
    "F.relu": model_with("x = F.relu(self.target(x))"),
    "clone before the in-place ReLU": model_with("x = self.relu(self.target(x).clone())"),
    "nn.ReLU() without inplace": MODEL.replace("nn.ReLU(inplace=True)", "nn.ReLU()") + GRADCAM,
    "a second ReLU module, out of place": MODEL.replace(
        "        self.pool =", "        self.act = nn.ReLU()\n        self.pool =").replace(
        TARGET_LINE, "        x = self.act(self.target(x))\n") + GRADCAM,
    "clamp(min=0)": model_with("x = self.target(x).clamp(min=0)"),
    "full backward pre-hook": gradcam_with(
        "model.target.register_full_backward_hook(save_gradient)",
        "model.target.register_full_backward_pre_hook(lambda module, grad_output: save_gradient(module, None, "
        "grad_output))", FIXED_MODEL),
}

WRONG = {
    # name: (code, the checks that must fail)
    "deprecated register_backward_hook": (
        gradcam_with("register_full_backward_hook", "register_backward_hook"),
        {"full backward hook", "heatmap", "any hook"}),
    "tensor hook instead of the module hook": (
        gradcam_with("""    handles = [model.target.register_forward_hook(save_activation),
               model.target.register_full_backward_hook(save_gradient)]
""", """    def hook_output(module, inputs, output):
        captured["activation"] = output.detach().clone()
        output.register_hook(lambda grad: captured.__setitem__("gradient", grad))

    handles = [model.target.register_forward_hook(hook_output)]
"""), {"full backward hook", "backward runs", "any hook"}),
    "retain_grad instead of the hook": (
        gradcam_with("""    handles = [model.target.register_forward_hook(save_activation),
               model.target.register_full_backward_hook(save_gradient)]
""", """    def keep_output(module, inputs, output):
        captured["activation"] = output.detach().clone()
        output.retain_grad()
        captured["output"] = output

    handles = [model.target.register_forward_hook(keep_output)]
""").replace('    weights = captured["gradient"]', '    captured["gradient"] = captured["output"].grad\n'
             '    weights = captured["gradient"]'),
        {"full backward hook", "captured gradient", "heatmap", "any hook"}),
    "detach the target's output": (
        model_with("x = self.relu(self.target(x).detach())"),
        {"backward runs", "full backward hook", "captured gradient", "heatmap", "parameter gradients"}),
    "ReLU through .data": (
        model_with("x = self.target(x)\nx.data.relu_()"),
        {"captured gradient", "heatmap", "parameter gradients", "any hook"}),
    "in-place ReLU under no_grad": (
        model_with("x = self.target(x)\nwith torch.no_grad():\n    x.relu_()"),
        {"backward runs"}),
    "hook on the ReLU module instead": (
        gradcam_with("model.target.register_full_backward_hook", "model.relu.register_full_backward_hook",
                     FIXED_MODEL.replace("nn.ReLU(inplace=True)", "nn.ReLU()").replace(
                         "x = torch.relu(self.target(x))", "x = self.relu(self.target(x))")),
        {"full backward hook", "captured gradient", "heatmap"}),
    "grad_input instead of grad_output": (
        gradcam_with('captured["gradient"] = grad_output[0]', 'captured["gradient"] = grad_input[0]', FIXED_MODEL),
        {"captured gradient", "heatmap"}),
    "ReLU removed": (model_with("x = self.target(x)"), {"forward", "captured gradient", "heatmap"}),
}

SAYS = {
    "deprecated register_backward_hook": ("register_backward_hook",),
    "tensor hook instead of the module hook": ("register_full_backward_hook",),
    "detach the target's output": ("never fired",),
}

# The right scores and gradients, without the `relu` and `pool` modules the task asks for: a state dict cannot
# show them (they have no parameters), so the grader reads the submodules.
# The in-place ReLU kept where no scenario used to go: a model in eval mode (Grad-CAM is usually run in eval
# mode), and a hook kind other than the one gradcam registers (any hook-based tool: a full backward pre-hook).
WRONG["in place in eval mode"] = (model_with(
    "x = torch.relu(self.target(x)) if self.training else self.relu(self.target(x))"), {"backward runs"})
WRONG["out of place only under a full backward hook"] = (model_with(
    "x = torch.relu(self.target(x)) if self.target._backward_hooks else self.relu(self.target(x))"),
    {"backward runs"})

WRONG["functional ReLU and pooling, no relu or pool module"] = ("""
import torch
import torch.nn.functional as F
from torch import nn


class GradCAMNet(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.target = nn.Conv2d(channels, channels, 3, padding=1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.relu(self.target(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)
""" + GRADCAM, "forward")
CORRECT["an extra ReLU module for the target"] = MODEL.replace(
    "        self.relu = nn.ReLU(inplace=True)\n",
    "        self.relu = nn.ReLU(inplace=True)\n        self.target_relu = nn.ReLU()\n").replace(
    TARGET_LINE, "        x = self.target_relu(self.target(x))\n") + GRADCAM

# The starter with its `raise NotImplementedError` deleted (a `pass` in its place): it must earn nothing.
WRONG["starter without the raise"] = ('''import torch
from torch import nn


class GradCAMNet(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.target = nn.Conv2d(channels, channels, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.relu(self.conv(x))  # no hook on conv: in place is fine here
        # TODO: your fix goes here (see the task above).
        pass
        x = self.pool(x).flatten(1)
        return self.head(x)


def gradcam(model, x, target_class):
    """Grad-CAM on model.target: the heatmap [N, H, W] and the gradient the hook captured [N, C, H, W]."""
    captured = {}

    def save_activation(module, inputs, output):  # forward hook: A, the layer's output
        captured["activation"] = output.detach()

    def save_gradient(module, grad_input, grad_output):  # full backward hook: dA = d score / d output
        captured["gradient"] = grad_output[0].detach()

    handles = [model.target.register_forward_hook(save_activation),
               model.target.register_full_backward_hook(save_gradient)]
    try:
        model.zero_grad()
        scores = model(x)
        scores[:, target_class].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    weights = captured["gradient"].mean(dim=(2, 3), keepdim=True)  # one weight per channel
    heatmap = torch.relu((weights * captured["activation"]).sum(dim=1))
    return heatmap, captured["gradient"]
''', {c.name for c in EXERCISE.checks})
