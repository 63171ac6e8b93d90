"""Exercise 12, the capstone: an unfamiliar training script with two bugs.

The script (data, model, loss, loop: about a hundred lines, in the notebook) writes in place on six lines: one
makes backward raise, one raises nothing but makes a gradient wrong, and the other four are harmless. Before
any tool runs, the learner classifies each (`in_place_writes()`: raises, harmless or silently wrong); then
fixes the two. The grader builds the learner's `Net` from its own initial parameters, trains three steps on
batches of its own with the learner's `make_optimizer` and `train_step`, and compares every parameter after
each step with the reference's: on batches of unequal sizes too, and from a temperature outside the range the
script clamps it to (so that the clamp acts). It checks the loss's gradients against finite differences, and
the loss alone on logits large enough that a softmax without its max shift overflows. It compares the
classification with the reference's in a hidden scenario only, so that the public data does not hold it.
Which lines are which is for references/capstone.py (never installed) to say: nothing in this package does.
Nothing counts until training runs and one step is right (the gate).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

import torch
from torch import nn

from .. import finite_differences, probes
from ..core import checks
from ..core.evidence import Evidence, Failed, failed
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from ..probes import GRAD, STATE
from . import _contract as contract

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


def _draw_model(dim: int, hidden: int, classes: int, g: torch.Generator, dtype: torch.dtype,
                outside: bool = False) -> dict[str, Any]:
    """The sizes and an initial state: LayerNorm's gain near 1 and the head's temperature in [3, 8], as a
    trained model's would be (draw_state's defaults suit weights, not these two). `outside`: a temperature
    outside the script's SCALE_RANGE (1, 30), below or above it, as a checkpoint trained with another range
    would have: the script's clamp after the first step then acts."""
    state = probes.draw_state(NetLayout(dim, hidden, classes), g, dtype)
    state[STATE.key("norm.weight")] = (1 + 0.2 * torch.randn(hidden, generator=g, dtype=torch.float64)).to(dtype)
    scale = 3 + 5 * torch.rand((), generator=g, dtype=torch.float64)
    if outside:
        low = bool(torch.rand((), generator=g) < 0.5)
        scale = 0.2 + 0.6 * torch.rand((), generator=g, dtype=torch.float64) if low else \
            32 + 8 * torch.rand((), generator=g, dtype=torch.float64)
    state[STATE.key("scale")] = scale.to(dtype)
    return {"dim": dim, "hidden": hidden, "classes": classes, **state}


def _build(ns, inputs, device, dtype) -> nn.Module:
    return probes.build(ns["Net"], (inputs["dim"], inputs["hidden"], inputs["classes"]), inputs, device, dtype)


# --- training: three steps, every parameter after each ---------------------------------------------------

LOSS = Family("loss")
"""The loss `train_step` returned, per step (`loss 1`), or why it is not a number."""
AFTER = {k: Family(f"after step {k}") for k in range(1, STEPS + 1)}
"""Every parameter after step k (`after step 1 gate.weight`)."""
TRAINING_WRITES = (LOSS, *AFTER.values())


GRAD_AT_ENTRY = Family("grad at entry")
"""Inputs: what each parameter's `.grad` holds before the first step (`grad at entry gate.weight`), left by a
backward of the caller's: the script's step zeroes the gradients first, so it must not count."""


def _training_drawer(dim: int, hidden: int, classes: int, batch: int | tuple[int, int], outside: bool = False,
                     grads_at_entry: bool = False):
    """batch (low, high): each step's batch size drawn per salt (the drawn tensors hold the largest; each step
    takes its first rows, `batches`). `outside`: a temperature outside the clamp's range (_draw_model).
    `grads_at_entry`: the parameters arrive with gradients in `.grad` (GRAD_AT_ENTRY)."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        sizes = [batch] * STEPS if isinstance(batch, int) else \
            torch.randint(batch[0], batch[1] + 1, (STEPS,), generator=g).tolist()
        if not isinstance(batch, int) and len(set(sizes)) == 1:
            sizes[-1] += 1  # unequal, whatever the draw
        rows = max(sizes)
        inputs = {
            **_draw_model(dim, hidden, classes, g, dtype, outside),
            "batches": ",".join(map(str, sizes)),
            "x": torch.randn(STEPS, rows, dim, generator=g, dtype=torch.float64).to(dtype),
            "y": torch.randint(0, classes, (STEPS, rows), generator=g),
        }
        if grads_at_entry:
            for key, t in probes.draw_state(NetLayout(dim, hidden, classes), g, dtype).items():
                inputs[GRAD_AT_ENTRY.key(STATE.member(key))] = t * 10
        return inputs

    return draw


def _as_loss(value: Any) -> float | str:
    """What train_step returned, as the loss it should be (a float), or what is wrong with it."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.detach())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return exercise_say("`train_step` returned {type}, not the batch's loss (`loss.item()`)", type=type(value).__name__)


def _train(ns, inputs, device, obs):
    model = _build(ns, inputs, device, inputs["x"].dtype)
    for name, p in model.named_parameters():  # the caller's own backward left these, if any
        entry = inputs.get(GRAD_AT_ENTRY.key(name))
        p.grad = None if entry is None else entry.to(device).clone()
    optimizer = ns["make_optimizer"](model)
    sizes = [int(n) for n in inputs["batches"].split(",")]
    for k in range(1, STEPS + 1):
        rows = sizes[k - 1]
        obs[LOSS.key(k)] = _as_loss(ns["train_step"](model, optimizer, inputs["x"][k - 1][:rows],
                                                     inputs["y"][k - 1][:rows]))
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


# --- the loss alone, on large logits --------------------------------------------------------------------------

LARGE_OFFSET = {torch.float32: 95.0, torch.float64: 720.0}
"""Logits around this: exp overflows there (above 88.7 in float32, 709.8 in float64) unless shifted by the row's
maximum first, as the script's softmax does; their spread (a few units) keeps every probability above zero."""


def _large_logits_drawer(batch: int, classes: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        logits = LARGE_OFFSET[dtype] + 3 * torch.randn(batch, classes, generator=g, dtype=torch.float64)
        return {"logits": logits.to(dtype), "y": torch.randint(0, classes, (batch,), generator=g)}

    return draw


def _loss_alone(ns, inputs, device, obs):
    """loss_fn on logits made by an op (as the model's are: the script shifts them in place), and its gradient."""
    leaf = inputs["logits"].requires_grad_(True)
    loss = ns["loss_fn"](leaf * 1, inputs["y"])
    obs["large logits loss"] = loss.detach().clone() if isinstance(loss, torch.Tensor) else \
        exercise_say("loss_fn returned {type}, not a tensor", type=type(loss).__name__)
    loss.backward()
    probes.observe_grad(obs, "large logits", leaf)


# --- the classification of the script's in-place writes ---------------------------------------------------------


def normalized(line: str) -> str:
    """A line of code as Python reads it: spacing, a trailing comment and the indentation do not count
    (`  y+=f(x ,dim=1)  # here` reads as `y += f(x, dim=1)`)."""
    text = line.strip()
    try:
        return ast.unparse(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return " ".join(text.split())


VERDICTS = ("raises", "harmless", "silently wrong")
"""What an in-place write of the script does: makes backward raise, nothing wrong, or a wrong gradient."""

CLASSIFICATION_PROBLEMS = {
    "undefined": "is not defined: define it in the answer cell, returning a dict from each line to its verdict",
    "not a dict": "did not return a dict: return one, from each in-place line of the given script (as the script "
                  "writes it) to \"raises\", \"harmless\" or \"silently wrong\"",
    "not a line": "has a key that is not a line of code: copy each line from the given script (a line number "
                  "changes whenever the script is edited)",
    "not a verdict": "has a value that is not \"raises\", \"harmless\" or \"silently wrong\"",
}
"""What can be wrong with the classification before it is compared, in words for the student."""


def _classification(ns, inputs, device, obs):
    """Observes `in_place_writes()` as text, a line per entry, `verdict<TAB>normalized line`, sorted; or what is
    wrong with it (CLASSIFICATION_PROBLEMS)."""
    obs["classification"], obs["classification problem"] = "", ""
    if not callable(ns.get("in_place_writes")):
        obs["classification problem"] = "undefined"
        return
    found = ns["in_place_writes"]()
    if not isinstance(found, dict):
        obs["classification problem"] = "not a dict"
        return
    entries = []
    for line, verdict in found.items():
        if not isinstance(line, str) or not line.strip() or "\n" in line.strip():
            obs["classification problem"] = "not a line"
            return
        said = " ".join(verdict.lower().split()) if isinstance(verdict, str) else None
        if said not in VERDICTS:
            obs["classification problem"] = "not a verdict"
            return
        entries.append(f"{said}\t{normalized(line)}")
    obs["classification"] = "\n".join(sorted(entries))


def _verdicts(text: str) -> dict[str, str]:
    return {line: verdict for verdict, line in (entry.split("\t", 1) for entry in text.splitlines() if entry)}


def _classified(scenario: str, bugs: bool) -> Rule:
    """bugs: the lines the reference calls raises and silently wrong are called so, and no other line is; else
    every line the reference calls harmless is called harmless."""
    problem = "classification problem"

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            got = pair.got.values
            if pair.got.error is not None or "classification" not in got:
                return checks.missing(ev, pair, "classification", "`in_place_writes()`")
            if got.get(problem):
                words = exercise_say("`in_place_writes()` {problem}.",
                                     problem=CLASSIFICATION_PROBLEMS.get(got[problem], "is not usable"))
                return failed(words, words)
            mine, want = _verdicts(got["classification"]), _verdicts(pair.want.values["classification"])
            if bugs:
                for verdict in ("raises", "silently wrong"):
                    if {line for line, v in mine.items() if v == verdict} != \
                            {line for line, v in want.items() if v == verdict}:
                        words = exercise_say("`in_place_writes()` does not name exactly the line that {verdict}: "
                                             "{hint}", verdict=verdict, hint=BUG_HINTS[verdict])
                        return failed(words, words)
            elif any(mine.get(line) != "harmless" for line, v in want.items() if v == "harmless"):
                words = ("`in_place_writes()` does not call every harmless in-place line of the script harmless "
                         "(or leaves one out): an in-place write is harmless where no saved tensor is hit and "
                         "nothing is hidden from autograd")
                return failed(words + ".", words)
        return PASS

    return Rule(evaluate, (scenario,), ("classification", problem))


BUG_HINTS = {
    "raises": "the one that changes in place a tensor an earlier operation saved (the locator's 'modified by'; "
              "anomaly mode's traceback shows the operation that saved it, not this one). Copy it as the given "
              "script writes it, before your fix.",
    "silently wrong": "the one that hides part of the forward pass from autograd (gradcheck the model and the loss "
                      "separately, then look in the one that disagrees). Copy it as the given script writes it, "
                      "before your fix.",
}


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
            return replace(found, message=exercise_say("{message} {hint}", message=found.message, hint=hint),
                           hidden=exercise_say("{hidden}. {hint}", hidden=found.hidden.rstrip(".。"), hint=hint))
        return PASS

    return Rule(evaluate, TRAINING, (LOSS.key(1), AFTER[1]))


PUBLIC, SMALL, WIDE, GRADCHECK = "public", "small", "wide", "gradcheck"
UNEQUAL, CLAMPED, LARGE, CLASSIFY = "batches of unequal sizes", "temperature outside the range", "large logits", \
    "classification"
DIRTY = "gradients at entry"
TRAINING = (PUBLIC, SMALL, WIDE, UNEQUAL, CLAMPED, DIRTY)
F64 = (torch.float64,)
TRAINS = checks.completes(TRAINING, "Training")
NEEDS = "training must first run, and one step be right (the checks `trains` and `one step`)"

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
        Scenario(UNEQUAL, _training_drawer(6, 10, 4, (6, 20)), _train, TRAINING_WRITES),
        Scenario(CLAMPED, _training_drawer(5, 8, 3, 12, outside=True), _train, TRAINING_WRITES),
        Scenario(DIRTY, _training_drawer(5, 8, 3, 10, grads_at_entry=True), _train, TRAINING_WRITES),
        Scenario(LARGE, _large_logits_drawer(6, 4), _loss_alone, ("large logits loss", GRAD)),
        Scenario(CLASSIFY, lambda g, dtype: {}, _classification, ("classification", "classification problem"),
                 dtypes=F64),
    ),
    checks=checks.gate_checks(
        checks.all_of(TRAINS, _after_one_step()), NEEDS,
        Check("trains", 1, "Three training steps (Net, make_optimizer, train_step) run without an error.", TRAINS,
              public=True),
        Check("one step", 2, "The first batch's loss, and every parameter after one step, equal the reference's "
              "(the script as it should have been), in float32 and float64.", _after_one_step(), public=True),
        Check("three steps", 2, "The losses and every parameter after each of three steps equal the reference's "
              "(batches of any size; a temperature the clamp brings back into its range).",
              checks.matches_reference((LOSS, AFTER[2], AFTER[3]), "After three steps", TRAINING), public=True),
        Check("gradcheck", 1, "The loss's gradients with respect to every parameter agree with finite "
              "differences (float64).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients of the loss that disagree with "
                                       "finite differences (is part of the computation hidden from autograd?)"),
              public=True),
        Check("large logits", 1, "loss_fn gives the reference's loss and gradient on logits large enough that "
              "exp overflows unless they are shifted first, as the script's softmax does.",
              checks.matches_reference(("large logits loss", GRAD), "The loss of large logits (keep the script's "
                                       "shift by the row's maximum)", (LARGE,))),
        Check("the two bugs", 2, "`in_place_writes()` calls the line that made backward raise \"raises\" and the "
              "line that made a gradient wrong without raising \"silently wrong\", and no other line either.",
              _classified(CLASSIFY, bugs=True)),
        Check("the harmless writes", 1, "`in_place_writes()` calls every other in-place write of the script "
              "\"harmless\".", _classified(CLASSIFY, bugs=False)),
    ),
)

CONTRACT = contract.Contract("train_step", (
    contract.Dimension(contract.GRAD_NORM, ("at most 1", "above 1"), "SGD, gradient clipping (MAX_GRAD_NORM = 1.0)"),
    contract.Dimension(contract.OPTIMIZER, ("SGD",), "the same optimizer: make_optimizer's SGD"),
    contract.Dimension(contract.MODE, ("train",), "trains three steps"),
    contract.Dimension(contract.GRADS_AT_ENTRY, ("none", "non-zero"), "the same values: the script's step zeroes "
                       "the gradients first, so gradients the model arrives with do not count"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "in float32 and float64"),
))
"""The situations the notebook lets `train_step` meet (tests/test_contracts_spanned.py measures them)."""
