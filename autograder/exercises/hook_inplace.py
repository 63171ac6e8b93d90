"""Exercise 9: a full backward hook on a layer, and an in-place activation right after it (Grad-CAM).

`register_full_backward_hook` makes the layer hand back a *view* of its output, made by a custom autograd
Function (BackwardHookFunction) whose backward calls the hook. Changing that view in place
(`nn.ReLU(inplace=True)`) would bypass that backward, so PyTorch refuses it, in forward, at the line that
writes. The fix belongs in the model (an out-of-place activation, or one on a clone); the hook stays.

The grader watches the hooks: it shadows the target layer's registration methods on the instance (the class
is left alone) to see which one `gradcam` calls and whether the hook it registered fires, and runs the model
with a full backward hook of its own, as any other hook-based tool would. The notebook asks for the broken
model's submodules, `relu` and `pool` among them: a state dict cannot show those (they have no parameters),
so the grader reads the submodules themselves. Nothing counts until the scores are right and forward and
backward run with the hook (the gate).
"""

from __future__ import annotations

import re
from typing import Any, cast

import torch
from torch import nn

from .. import probes
from ..core import checks
from ..core.evidence import Evidence, failed
from ..core.messages import VIEW_MODIFIED
from ..core.spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from ..probes import GRAD
from . import _contract as contract

HOOK_VIEW_ERROR = re.compile(r"Output \d+ of BackwardHookFunction(Backward)? " + VIEW_MODIFIED)
"""PyTorch's refusal, as torch 2.13 words it (`of BackwardHookFunction`) and older releases
(`of BackwardHookFunctionBackward`); the second form is raised where the change was hidden from autograd
(under `torch.no_grad()`) and the view is used later."""

HOOK_MEANING = (
    "A full backward hook (register_full_backward_hook) makes its layer return a view of the output, made "
    "by a custom autograd Function whose backward calls the hook. An in-place op on that view "
    "(`nn.ReLU(inplace=True)`, `F.relu(..., inplace=True)`, `.relu_()`, `+=`) would bypass that backward and "
    "the hook with it, so PyTorch refuses it in forward, at the line that writes. Keep the hook and make the "
    "activation after the hooked layer out of place (`torch.relu(out)`, `F.relu(out)`, `nn.ReLU()`), or "
    "apply it to `out.clone()`."
)

HOOK_SHORT = ("an in-place op wrote into the view that the full backward hook makes of the output of "
              "model.target; make the activation after model.target out of place")
"""HOOK_MEANING in short, for a failure found on hidden inputs (grade.py adds the line of the answer)."""


class GradCAMNetLayout(nn.Module):
    """The model's parameters and no forward: the shapes the grader draws a state for. The reference
    (references/hook_inplace.py, never installed) adds the forward."""

    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.target = nn.Conv2d(channels, channels, 3, padding=1)
        self.head = nn.Linear(channels, classes)


def _drawer(channels: int, classes: int, batch: int, height: int, width: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "channels": channels,
            "classes": classes,
            "target_class": int(torch.randint(classes, (), generator=g)),
            "x": torch.randn(batch, 3, height, width, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(batch, classes, generator=g, dtype=torch.float64).to(dtype),
            **probes.draw_state(GradCAMNetLayout(channels, classes), g, dtype),
        }

    return draw


def _model(ns, inputs, device) -> nn.Module:
    return probes.build(ns["GradCAMNet"], (inputs["channels"], inputs["classes"]), inputs, device,
                        inputs["x"].dtype)


class HookWatch:
    """Which hooks the code registers on `layer`: the layer's registration methods are shadowed by
    instance attributes (its class is untouched) that count the registrations and the calls of the hooks
    registered through them."""

    FULL = ("register_full_backward_hook", "register_full_backward_pre_hook")

    def __init__(self, layer: nn.Module):
        self.registered = self.fired = self.deprecated = 0
        for name in self.FULL:
            setattr(layer, name, self._full(getattr(layer, name)))
        setattr(layer, "register_backward_hook", self._deprecated(layer.register_backward_hook))  # noqa: B010

    def _full(self, register):
        def watched(hook, *args, **kwargs):
            self.registered += 1

            def counted(*hook_args):
                self.fired += 1
                return hook(*hook_args)

            return register(counted, *args, **kwargs)

        return watched

    def _deprecated(self, register):
        def watched(hook, *args, **kwargs):
            self.deprecated += 1
            return register(hook, *args, **kwargs)

        return watched

    def observe(self, obs: dict[str, Any], model: nn.Module) -> None:
        obs["no deprecated hook"] = self.deprecated == 0
        obs["full hook registered"] = self.registered > 0
        obs["full hook fired"] = self.fired > 0
        obs["hooks removed"] = not any(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                                       or m._backward_pre_hooks for m in model.modules())


def _tensor_or_why(value: object, what: str) -> torch.Tensor | str:
    if isinstance(value, torch.Tensor):
        return value
    return exercise_say("gradcam returned a {type} as the {what}, not a tensor", type=type(value).__name__, what=what)


def _gradcam(ns, inputs, device, obs, train: bool = True):
    """The student's gradcam on the student's model; the model's scores without any hook first. `train` False:
    the model in eval mode, as Grad-CAM is usually run."""
    model = _model(ns, inputs, device).train(train)
    obs["submodules"] = ", ".join(f"{name}: {type(m).__name__}" for name, m in model.named_children())
    x = inputs["x"]
    obs["output"] = model(x).detach()
    model.zero_grad(set_to_none=True)
    watch = HookWatch(cast(nn.Module, model.target))  # a submodule (nn.Module's __getattr__ also admits tensors)
    try:
        result = ns["gradcam"](model, x, inputs["target_class"])
    finally:
        watch.observe(obs, model)
    if isinstance(result, (tuple, list)) and len(result) == 2:
        obs["heatmap"] = _tensor_or_why(result[0], "heatmap")
        obs["captured gradient"] = _tensor_or_why(result[1], "gradient")
    else:
        why = exercise_say("gradcam returned a {type}, not the pair (heatmap, gradient)", type=type(result).__name__)
        obs["heatmap"] = obs["captured gradient"] = why
    probes.observe_grads(obs, model)


GRADCAM_WRITES = ("submodules", "output", "no deprecated hook", "full hook registered", "full hook fired",
                  "hooks removed", "heatmap", "captured gradient", GRAD)


def _gradcam_eval(ns, inputs, device, obs):
    _gradcam(ns, inputs, device, obs, train=False)


FULL, PRE = "full backward", "full backward pre"
"""The kinds of hook a tool may put on model.target: a module full backward hook, or a full backward pre-hook.
torch's global module hook (nn.modules.module.register_module_full_backward_hook) is not among them: it hooks
every module, conv too, whose in-place ReLU the task keeps; the notebook says so."""


def _any_hook(kind: str = FULL, train: bool = True):
    """The student's model with a hook of the grader's of `kind` on model.target, as any tool would register it,
    in training or eval mode; a loss with random weights on the scores."""

    def run(ns, inputs, device, obs):
        model = _model(ns, inputs, device).train(train)
        seen: dict[str, torch.Tensor] = {}

        def keep(module, grad_input, grad_output):
            seen["gradient"] = grad_output[0].detach().clone()

        if kind == PRE:
            handle = nn.Module.register_full_backward_pre_hook(  # whatever the class overrides
                model.target, lambda module, grad_output: keep(module, None, grad_output))
        else:
            handle = nn.Module.register_full_backward_hook(model.target, keep)
        try:
            x = inputs["x"].requires_grad_(True)
            scores = model(x)
            (scores * inputs["grad_output"]).sum().backward()  # backward(grad) would import torch.fx: 1 s
        finally:
            handle.remove()
        _observe_any(obs, seen, model, x)

    return run


def _observe_any(obs: dict[str, Any], seen: dict[str, torch.Tensor], model: nn.Module, x: torch.Tensor) -> None:
    """What the grader's hook saw, and the gradients of the input and of every parameter."""
    obs["hooked gradient"] = seen.get("gradient", "the grader's hook on model.target never fired")
    probes.observe_grad(obs, "x", x)
    probes.observe_grads(obs, model)


ANY_HOOK_WRITES = ("hooked gradient", GRAD)


def runs(scenarios: tuple[str, ...], what: str) -> Rule:
    """checks.completes, with what the hook's view error means where that is the error."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            error = pair.got.error
            if error is not None:
                if HOOK_VIEW_ERROR.search(error.message):
                    return failed(exercise_say("{what} failed. In {trial}: {explanation}\nWhat it means: {meaning}",
                                               what=what, trial=pair.label, explanation=ev.explain(error),
                                               meaning=HOOK_MEANING),
                                  exercise_say("{what} failed: {short}", what=what, short=HOOK_SHORT),
                                  trial=pair.trial, error=error)
                return failed(exercise_say("{what} failed. In {trial}: {explanation}", what=what, trial=pair.label,
                                           explanation=ev.explain(error)),
                              exercise_say("{what} failed", what=what), trial=pair.trial, error=error)
        return PASS

    return Rule(evaluate, scenarios, ())


REQUIRED = {"conv": "Conv2d", "target": "Conv2d", "relu": "ReLU", "pool": "AdaptiveAvgPool2d", "head": "Linear"}
"""The submodules the notebook asks for, by name and type; others may be added."""


def _structure(scenarios: tuple[str, ...]) -> Rule:
    """The model has the submodules REQUIRED, each of its type (a state dict cannot show `relu` and `pool`)."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            said = pair.got.values.get("submodules")
            if not isinstance(said, str):
                return checks.missing(ev, pair, "submodules", "The model's submodules")
            have = dict(item.split(": ", 1) for item in said.split(", ") if ": " in item)
            wrong = [f"`{name}` ({kind})" for name, kind in REQUIRED.items() if have.get(name) != kind]
            if wrong:
                text = exercise_say("The model lacks submodules the task asks for, or has them of another type: "
                                    "{wrong}. Keep the broken model's submodules (conv, target, relu, pool, head): "
                                    "tools and code that reach into the model find them by name",
                                    wrong=", ".join(wrong))
                return failed(text + ".", text)
        return PASS

    return Rule(evaluate, scenarios, ("submodules",))


PUBLIC, BATCH, ONE, EVAL = "public", "batch", "one image", "eval mode"
ANY_PUBLIC, ANY_HIDDEN = "grader's hook", "grader's hook, hidden"
ANY_PRE = "grader's pre-hook, eval mode"
GRADCAM = (PUBLIC, BATCH, ONE, EVAL)
ANY = (ANY_PUBLIC, ANY_HIDDEN, ANY_PRE)
FORWARD = checks.all_of(checks.matches_reference(("output",), "Scores", GRADCAM), _structure(GRADCAM))
BACKWARD = runs(GRADCAM + ANY, "Forward and backward with a full backward hook on model.target")
NEEDS = ("the scores must first be right, with the task's submodules, and forward and backward run with the hook "
         "(the checks `forward` and `backward runs`)")

EXERCISE = Exercise(
    id="hook_inplace",
    number=9,
    title="A hook and an in-place activation",
    defines=(Symbol("GradCAMNet", "class", ("channels", "classes")),
             Symbol("gradcam", "function", ("model", "x", "target_class"))),
    failure=ExpectedError("RuntimeError", HOOK_VIEW_ERROR),
    scenarios=(
        Scenario(PUBLIC, _drawer(3, 4, 2, 5, 5), _gradcam, GRADCAM_WRITES, public=True),
        Scenario(ANY_PUBLIC, _drawer(3, 4, 2, 5, 5), _any_hook(), ANY_HOOK_WRITES, public=True),
        Scenario(BATCH, _drawer(6, 5, 4, 7, 6), _gradcam, GRADCAM_WRITES),
        Scenario(ONE, _drawer(4, 3, 1, 8, 8), _gradcam, GRADCAM_WRITES),
        Scenario(EVAL, _drawer(5, 4, 3, 6, 6), _gradcam_eval, GRADCAM_WRITES),
        Scenario(ANY_HIDDEN, _drawer(5, 6, 3, 6, 7), _any_hook(), ANY_HOOK_WRITES),
        Scenario(ANY_PRE, _drawer(4, 5, 2, 6, 5), _any_hook(PRE, train=False), ANY_HOOK_WRITES),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, BACKWARD), NEEDS,
        Check("forward", 1, "Without any hook, the model's scores equal head(pool(relu(target(relu(conv(x)))))): "
              "a ReLU still follows the target layer; the model has the submodules conv, target, relu, pool and "
              "head.", FORWARD, public=True),
        Check("backward runs", 2, "gradcam(model, x, target_class) runs forward and backward with its full "
              "backward hook on model.target, and the model runs them with a hook of the grader's too.",
              BACKWARD, public=True),
        Check("full backward hook", 1, "gradcam captures the gradient with a module full backward hook on "
              "model.target (register_full_backward_hook, or register_full_backward_pre_hook) that fires, and "
              "removes its hooks before it returns.",
              checks.all_of(
                  checks.holds("no deprecated hook", GRADCAM, "gradcam calls register_backward_hook, the "
                               "deprecated non-full hook, which hides the in-place error instead of fixing it; "
                               "keep register_full_backward_hook and fix the model"),
                  checks.holds("full hook registered", GRADCAM, "gradcam registers no full backward hook on "
                               "model.target; keep `model.target.register_full_backward_hook(...)`: the task is "
                               "to keep the hook and fix the model"),
                  checks.holds("full hook fired", GRADCAM, "The full backward hook gradcam registered on "
                               "model.target never fired: no gradient reached the output of model.target (did "
                               "forward raise before backward, or was that output detached?)"),
                  checks.holds("hooks removed", GRADCAM, "gradcam left hooks on the model: remove each one "
                               "with the handle its register_... call returned"),
              ), public=True),
        Check("captured gradient", 2, "The gradient gradcam returns, which its hook captured (the gradient of "
              "the class score with respect to the output of model.target), matches the reference, in float32 "
              "and float64.",
              checks.matches_reference(("captured gradient",), "Captured gradient (the hook's grad_output[0] "
                                        "on model.target)", GRADCAM), public=True),
        Check("heatmap", 2, "The heatmap relu(sum over channels of mean(gradient) * activation) matches the "
              "reference's.",
              checks.matches_reference(("heatmap",), "Heatmap", GRADCAM), public=True),
        Check("parameter gradients", 1, "After gradcam, the gradient of every parameter matches the reference.",
              checks.matches_reference((GRAD,), "Parameter gradient", (BATCH, ONE, EVAL))),
        Check("any hook", 1, "With the grader's own hook on model.target (a full backward hook or a full backward "
              "pre-hook; in training or eval mode), the gradient that hook "
              "sees and the gradients of the input and of every parameter match the reference.",
              checks.matches_reference(("hooked gradient", GRAD), "With the grader's hook", ANY), public=True),
    ),
)

CONTRACT = contract.Contract("GradCAMNet", (
    contract.Dimension(contract.MODE, ("train", "eval"), "any hook-based tool (Grad-CAM is usually run in eval mode)"),
    contract.Dimension(contract.HOOKS, ("none", FULL, PRE),
                       "the same scores without a hook; any hook-based tool (a full backward hook or pre-hook on "
                       "model.target) works with it"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "in float32 and float64"),
))
"""The situations the notebook lets the model meet (tests/test_contracts_spanned.py measures them)."""
