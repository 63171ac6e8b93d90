"""Exercise 12, the capstone: an unfamiliar training script with two bugs.

The script (data, model, loss, loop: about a hundred lines, in the notebook) has one in-place operation that
makes backward raise, and one line that raises nothing but makes a gradient wrong; its other in-place
operations are harmless. The learner fixes the two and names each line. The grader builds the learner's
`Net` from its own initial parameters, trains three steps on batches of its own with the learner's
`make_optimizer` and `train_step`, and compares every parameter after each step with the reference's; it
checks the loss's gradients against finite differences; and it compares the two named lines with the
reference's, in hidden scenarios only, so that the public data does not hold them. Which lines they are is
for references/capstone.py (never installed) to say: nothing in this package does.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

import torch
from torch import nn

from .. import checks, finite_differences, probes
from ..evidence import Evidence, Failed, failed
from ..messages import INPLACE_ERROR
from ..probes import STATE
from ..spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict

STEPS = 3
"""Training steps per trial: one batch each."""


class NetLayout(nn.Module):
    """The model's parameters, by the script's names, and no forward: the shapes the grader draws a state for.
    The reference (references/capstone.py, never installed) adds the forward."""

    def __init__(self, dim: int, hidden: int, classes: int):
        super().__init__()
        self.inp = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.gate = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes, bias=False)
        self.scale = nn.Parameter(torch.tensor(5.0))


def _draw_model(dim: int, hidden: int, classes: int, g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
    """The sizes and an initial state: LayerNorm's gain near 1 and the head's temperature in [3, 8], as a
    trained model's would be (draw_state's defaults suit weights, not these two)."""
    state = probes.draw_state(NetLayout(dim, hidden, classes), g, dtype)
    state[STATE.key("norm.weight")] = (1 + 0.2 * torch.randn(hidden, generator=g, dtype=torch.float64)).to(dtype)
    state[STATE.key("scale")] = (3 + 5 * torch.rand((), generator=g, dtype=torch.float64)).to(dtype)
    return {"dim": dim, "hidden": hidden, "classes": classes, **state}


def _build(ns, inputs, device, dtype) -> nn.Module:
    return probes.build(ns["Net"], (inputs["dim"], inputs["hidden"], inputs["classes"]), inputs, device, dtype)


# --- training: three steps, every parameter after each ---------------------------------------------------

LOSS = Family("loss")
"""The loss `train_step` returned, per step (`loss 1`), or why it is not a number."""
AFTER = {k: Family(f"after step {k}") for k in range(1, STEPS + 1)}
"""Every parameter after step k (`after step 1 gate.weight`)."""
TRAINING_WRITES = (LOSS, *AFTER.values())


def _training_drawer(dim: int, hidden: int, classes: int, batch: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            **_draw_model(dim, hidden, classes, g, dtype),
            "x": torch.randn(STEPS, batch, dim, generator=g, dtype=torch.float64).to(dtype),
            "y": torch.randint(0, classes, (STEPS, batch), generator=g),
        }

    return draw


def _as_loss(value: Any) -> float | str:
    """What train_step returned, as the loss it should be (a float), or what is wrong with it."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.detach())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return f"`train_step` returned {type(value).__name__}, not the batch's loss (`loss.item()`)"


def _train(ns, inputs, device, obs):
    model = _build(ns, inputs, device, inputs["x"].dtype)
    optimizer = ns["make_optimizer"](model)
    for k in range(1, STEPS + 1):
        obs[LOSS.key(k)] = _as_loss(ns["train_step"](model, optimizer, inputs["x"][k - 1], inputs["y"][k - 1]))
        # By name, so `scale` comes last: a miss names first a parameter that a wrong gradient moved itself,
        # not the temperature, which such a gradient moves only through the clipping.
        for name, p in sorted(model.named_parameters(), key=lambda item: item[0]):
            obs[AFTER[k].key(name)] = p.detach().clone()


# --- gradcheck: the loss's gradients against finite differences ---------------------------------------------


def _gradcheck_drawer(dim: int, hidden: int, classes: int, batch: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            **_draw_model(dim, hidden, classes, g, dtype),
            "x": torch.randn(batch, dim, generator=g, dtype=torch.float64).to(dtype),
            "y": torch.randint(0, classes, (batch,), generator=g),
        }

    return draw


def _gradcheck(ns, inputs, device, obs):
    """loss_fn(Net(x), y) as a function of every parameter, against finite differences."""
    model = _build(ns, inputs, device, inputs["x"].dtype)
    names = sorted(n for n, _ in model.named_parameters())
    params = dict(model.named_parameters())

    def loss(*values: torch.Tensor) -> torch.Tensor:
        logits = torch.func.functional_call(model, dict(zip(names, values)), (inputs["x"],))
        return ns["loss_fn"](logits, inputs["y"])

    finite_differences.observe(obs, loss, tuple(params[n].detach() for n in names))


# --- the named lines ---------------------------------------------------------------------------------------


def normalized(line: str) -> str:
    """A line of code as Python reads it: spacing, a trailing comment and the indentation do not count
    (`  y+=f(x ,dim=1)  # here` reads as `y += f(x, dim=1)`)."""
    text = line.strip()
    try:
        return ast.unparse(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return " ".join(text.split())


LINE_PROBLEMS = {
    "undefined": "is not defined: define it in the answer cell, returning the line as a string",
    "number": "returned a number: return the line's text, copied from the given script (a line number changes "
              "whenever the script is edited)",
    "not text": "did not return a string: return the line's text, copied from the given script",
    "empty": "returned an empty string: return the line's text, copied from the given script",
    "several": "returned several lines: return the one line, copied from the given script",
}
"""What can be wrong with a named line before it is compared, in words for the student."""


def _named_line(function: str):
    """Observes `function()`'s line, normalized, and what is wrong with it ("" for each when there is nothing)."""

    def run(ns, inputs, device, obs):
        obs[function], obs[f"{function} problem"] = "", ""
        if not callable(ns.get(function)):
            obs[f"{function} problem"] = "undefined"
            return
        value = ns[function]()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            obs[f"{function} problem"] = "number"
        elif not isinstance(value, str):
            obs[f"{function} problem"] = "not text"
        elif not value.strip():
            obs[f"{function} problem"] = "empty"
        elif "\n" in value.strip():
            obs[f"{function} problem"] = "several"
        else:
            obs[function] = normalized(value)

    return run


def _names_the_line(function: str, scenario: str, wrong: str) -> Rule:
    """`function()` returns the line the reference's does (normalized); `wrong` says what a miss means."""
    problem = f"{function} problem"

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            got = pair.got.values
            if pair.got.error is not None:
                return checks.missing(ev, pair, function, f"`{function}()`")
            if got.get(problem):
                words = f"`{function}()` {LINE_PROBLEMS.get(got[problem], 'is not usable')}."
                return failed(words, words)
            if function not in got:
                return checks.missing(ev, pair, function, f"`{function}()`")
            if got[function] != pair.want.values[function]:
                words = f"`{function}()` does not return {wrong}."
                return failed(words, words)
        return PASS

    return Rule(evaluate, (scenario,), (function, problem))


# --- one step, three steps -----------------------------------------------------------------------------------

FORWARD_HINT = ("The loss of the first batch is computed before any step, so your model or loss computes "
                "something else than the script does. A fix changes how autograd sees the computation, never "
                "the values it computes: keep every line's values as they were.")
GRADIENT_HINT = ("The loss of the first batch matches, so the forward pass is right, but the parameters after "
                 "the step are not: a gradient is wrong, and nothing raised. Part of the computation is hidden "
                 "from autograd (a `.data` write, a `detach()`); compare gradients with finite differences "
                 "(torch.autograd.gradcheck) on the model and on the loss separately to find where.")


def _after_one_step() -> Rule:
    """The first loss, then every parameter after the first step; a miss says which of the two went wrong."""
    forward = checks.matches_reference((LOSS.key(1),), "The loss of the first batch", TRAINING)
    step = checks.matches_reference((AFTER[1],), "Parameters after one step", TRAINING)

    def evaluate(ev: Evidence) -> Verdict:
        for rule, hint in ((forward, FORWARD_HINT), (step, GRADIENT_HINT)):
            verdict = rule(ev)
            if verdict.passed:
                continue
            if any(pair.got.error is not None for pair in ev.pairs()):
                return verdict  # an error stopped it: its explanation says what to do
            found = verdict if isinstance(verdict, Failed) else failed(verdict.message, "This check failed")
            return replace(found, message=f"{found.message} {hint}", hidden=f"{found.hidden.rstrip('.')}. {hint}")
        return PASS

    return Rule(evaluate, TRAINING, (LOSS.key(1), AFTER[1]))


PUBLIC, SMALL, WIDE, GRADCHECK = "public", "small", "wide", "gradcheck"
RAISING, SILENT = "raising line", "silent line"
TRAINING = (PUBLIC, SMALL, WIDE)
F64 = (torch.float64,)

EXERCISE = Exercise(
    id="capstone",
    preload=("torch._dynamo", "torch.fx.experimental.symbolic_shapes"),  # its trials step an optimizer
    number=12,
    title="Capstone: an unfamiliar training script",
    defines=(
        Symbol("Net", "class", ("dim", "hidden", "classes")),
        Symbol("loss_fn", "function", ("logits", "y")),
        Symbol("make_optimizer", "function", ("model",)),
        Symbol("train_step", "function", ("model", "optimizer", "x", "y")),
    ),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC, _training_drawer(4, 6, 3, 8), _train, TRAINING_WRITES, public=True),
        Scenario(GRADCHECK, _gradcheck_drawer(3, 5, 3, 6), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64,
                 public=True),
        Scenario(SMALL, _training_drawer(5, 8, 3, 12), _train, TRAINING_WRITES),
        Scenario(WIDE, _training_drawer(7, 24, 5, 20), _train, TRAINING_WRITES),
        Scenario(RAISING, lambda g, dtype: {}, _named_line("raising_line"), ("raising_line", "raising_line problem"),
                 dtypes=F64),
        Scenario(SILENT, lambda g, dtype: {}, _named_line("silent_line"), ("silent_line", "silent_line problem"),
                 dtypes=F64),
    ),
    checks=(
        Check("trains", 1, "Three training steps (Net, make_optimizer, train_step) run without an error.",
              checks.completes(TRAINING, "Training"), public=True),
        Check("one step", 2, "The first batch's loss, and every parameter after one step, equal the reference's "
              "(the script as it should have been), in float32 and float64.", _after_one_step(), public=True),
        Check("three steps", 2, "The losses and every parameter after each of three steps equal the reference's.",
              checks.matches_reference((LOSS, AFTER[2], AFTER[3]), "After three steps", TRAINING), public=True),
        Check("gradcheck", 1, "The loss's gradients with respect to every parameter agree with finite "
              "differences (float64).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients of the loss that disagree with "
                                       "finite differences (is part of the computation hidden from autograd?)"),
              public=True),
        Check("raising line", 2, "`raising_line()` returns the line of the given script that made backward raise.",
              _names_the_line("raising_line", RAISING, "the line of the given script that made backward raise: "
                              "the one that changed in place a tensor an earlier operation had saved (the "
                              "locator's 'modified by'; anomaly mode's traceback shows the operation that saved "
                              "it, not this one). Copy it as the given script writes it, before your fix")),
        Check("silent line", 2, "`silent_line()` returns the line of the given script that made a gradient wrong "
              "without raising.",
              _names_the_line("silent_line", SILENT, "the line of the given script that made a gradient wrong "
                              "without raising: gradcheck the model and the loss separately, then look in the "
                              "one that disagrees for a change autograd does not see. Copy it as the given "
                              "script writes it, before your fix")),
    ),
)
