"""The exercise inplace_dropout: `F.dropout(..., inplace=True)` after a ReLU in a classifier head
(seed 000, timm MobileNetV4).

`relu` saves its output for backward; in-place dropout overwrites that output, so backward raises, in
float32 and under autocast alike. The report wrote both in place to save memory, and the task keeps that: in
training, `fc` must receive `proj`'s output tensor itself, changed in place (a linear layer saves its input,
not its output, so dropout may write into it before the ReLU). Dropout is random, so no check compares with
one random stream: the input of `fc` is observed, and the checks judge it (zeros, or relu(proj(x)) / (1 - p),
about a fraction p of zeros) and recompute the gradients with the mask it shows. Two calls on the same input
must draw different masks, and a third call on a batch of another size, not contiguous, must be dropout too;
in training mode under `torch.no_grad()` or `torch.inference_mode()` (Monte Carlo dropout) it must drop as well.
Nothing counts until the forward and the dropout are right and backward runs (the gate).
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from .. import finite_differences, probes
from ..core import checks
from ..core.evidence import Evidence, GraderError, Pair
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say
from ..probes import GRAD
from . import _contract as contract

DEFAULT_P = 0.2
"""The spec's default drop_rate: a head constructed without it must drop with this probability."""

SIGMAS = 6.0
"""How many binomial standard deviations the dropped fraction may stray from p (false alarm ~1e-9)."""

MARGIN = 4.0
"""Entries count towards the drop rate only if relu(proj(x)) > MARGIN * atol: rounding can't zero them."""

AUTOCAST_SCALE = 1.0
"""Under autocast a gradient is a sum of products rounded to 8 (bfloat16) or 11 (float16) bits: its error
is relative to the size of the terms, not of the result. So both sides are divided by the reference's
largest entry (at least AUTOCAST_SCALE) before they are compared."""

GRADCHECK_SEED = 1234
"""Reseeded before every forward of the gradcheck, so finite differences see one fixed mask."""

PARAMS = ("proj.weight", "proj.bias", "fc.weight", "fc.bias")


class ClassifierHeadLayout(nn.Module):
    """The head's parameters, and no forward: the shapes the grader draws a state for. The reference
    (references/inplace_dropout.py, never installed) adds the forward."""

    def __init__(self, in_features: int, num_classes: int, drop_rate: float = DEFAULT_P):
        super().__init__()
        self.drop_rate = drop_rate
        self.proj = nn.Linear(in_features, in_features)
        self.fc = nn.Linear(in_features, num_classes)


# --- scenarios -------------------------------------------------------------------------------------


def _drawer(batch: int, features: int, classes: int, drop_rate: float | None):
    """drop_rate None: the head is constructed without it, so the default must apply."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "in_features": features,
            "num_classes": classes,
            "drop_rate": drop_rate,
            "x": torch.randn(batch, features, generator=g, dtype=torch.float64).to(dtype),
            "grad_output": torch.randn(batch, classes, generator=g, dtype=torch.float64).to(dtype),
            **probes.draw_state(ClassifierHeadLayout(features, classes), g, dtype),
        }

    return draw


def _build(ns, inputs, device, dtype) -> nn.Module:
    args: tuple[Any, ...] = (inputs["in_features"], inputs["num_classes"])
    if inputs["drop_rate"] is not None:
        args += (inputs["drop_rate"],)
    return probes.build(ns["ClassifierHead"], args, inputs, device, dtype)


def _watch(model: nn.Module, obs: dict[str, Any], key: str = "fc input") -> list[Any]:
    """Records what `fc` receives (as `key`) and whether it is the very tensor `proj` returned (IN_PLACE).

    `proj`'s output is held until `fc` runs: an address compared after its tensor was freed could be handed
    to the next allocation (a clone) and look the same. Seen once in three calls, so held, never guessed."""
    made: dict[str, torch.Tensor] = {}

    def after_proj(module: nn.Module, args: Any, out: torch.Tensor) -> None:
        made["proj"] = out  # alive, so no later tensor can get its memory

    def before_fc(module: nn.Module, args: Any) -> None:
        got = args[0]
        obs[key] = got.detach().clone()
        held = made.pop("proj", None)
        same = held is not None and (held.data_ptr(), tuple(held.shape), held.dtype) == (
            got.data_ptr(), tuple(got.shape), got.dtype)
        obs[IN_PLACE] = same and obs.get(IN_PLACE, True)

    # the model's layers: modules (nn.Module's __getattr__ also admits tensors)
    return [cast(nn.Module, model.proj).register_forward_hook(after_proj),
            cast(nn.Module, model.fc).register_forward_pre_hook(before_fc)]


def _forward_backward(train: bool, autocast: bool = False):
    def run(ns, inputs, device, obs):
        model = _build(ns, inputs, device, inputs["x"].dtype)
        model.train(train)
        _watch(model, obs)
        x = inputs["x"].requires_grad_(True)
        before = x.detach().clone()
        half = torch.bfloat16 if device.type == "cpu" else torch.float16
        with torch.autocast(device.type, dtype=half, enabled=autocast):
            out = model(x)
        obs["output"] = out
        obs["x unchanged"] = torch.equal(x.detach(), before)
        probes.backward_with(out.to(inputs["grad_output"].dtype), inputs["grad_output"])  # autocast: to float32
        probes.observe_grad(obs, "x", x)
        probes.observe_grads(obs, model)
        obs["x unchanged"] = torch.equal(x.detach(), before)

    return run


IN_PLACE = "fc input is proj output"
MASKS_DIFFER = "masks differ between calls"
OTHER = "fc input, other batch"
FORWARD_BACKWARD_WRITES = ("fc input", IN_PLACE, "output", "x unchanged", GRAD)


def _drawer_calls(batch: tuple[int, int], features: tuple[int, int], classes: int, drop_rate: float):
    """Two calls' input (batch and features drawn per salt) and a third call's, of another batch size, drawn
    twice as wide: the scenario takes every other feature, so that it is not contiguous."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        first = int(torch.randint(batch[0], batch[1] + 1, (), generator=g))
        other = first + int(torch.randint(1, 9, (), generator=g))
        n = int(torch.randint(features[0], features[1] + 1, (), generator=g))
        return {**_drawer(first, n, classes, drop_rate)(g, dtype),
                "x other wide": torch.randn(other, 2 * n, generator=g, dtype=torch.float64).to(dtype)}

    return draw


def _calls(ns, inputs, device, obs):
    """In training mode: the same input twice (the masks must differ), then a batch of another size that is
    not contiguous (it must be dropped out too), and backward through the last call."""
    model = _build(ns, inputs, device, inputs["x"].dtype).train()
    handles = _watch(model, obs)
    x = inputs["x"]
    model(x)
    first = obs["fc input"]
    model(x)
    obs[MASKS_DIFFER] = not torch.equal(first != 0, obs["fc input"] != 0)
    obs["fc input"] = first
    for handle in handles:
        handle.remove()
    other = inputs["x other wide"][:, ::2].requires_grad_(True)
    _watch(model, obs, OTHER)
    out = model(other)
    probes.backward_with(out, torch.ones_like(out))


CALLS_WRITES = ("fc input", IN_PLACE, MASKS_DIFFER, OTHER)


def _without_grad(inference: bool):
    """Training mode while no gradient is recorded (Monte Carlo dropout: `torch.no_grad()`, or
    `torch.inference_mode()`): the contract says training=self.training, so dropout must still drop."""

    def run(ns, inputs, device, obs):
        model = _build(ns, inputs, device, inputs["x"].dtype).train()
        _watch(model, obs)
        with torch.inference_mode() if inference else torch.no_grad():
            model(inputs["x"])

    return run


NO_GRAD_WRITES = ("fc input", IN_PLACE)


def _gradcheck(ns, inputs, device, obs):
    """float64 gradcheck in training mode: the mask is held fixed by reseeding before each forward."""
    model = _build(ns, inputs, device, inputs["x"].dtype).train()
    names = ("proj.weight", "fc.weight")
    weights = [dict(model.named_parameters())[n].detach().clone().requires_grad_(True) for n in names]

    def fn(x, *ws):
        torch.manual_seed(GRADCHECK_SEED)
        return torch.func.functional_call(model, dict(zip(names, ws)), (x,))

    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        finite_differences.observe(obs, fn, (inputs["x"].requires_grad_(True), *weights))


# --- checks ----------------------------------------------------------------------------------------


def _p(pair: Pair) -> float:
    p = pair.inputs["drop_rate"]
    return DEFAULT_P if p is None else p


def _how_built(pair: Pair) -> str:
    p = pair.inputs["drop_rate"]
    return "constructed without drop_rate, so p = 0.2" if p is None else f"drop_rate={p:g}"


def _f64(t: torch.Tensor) -> torch.Tensor:
    """A float64 copy: never the drawn input itself, which other trials and checks read too."""
    return t.detach().to(torch.float64, copy=True)


def _state(pair: Pair, name: str) -> torch.Tensor:
    return _f64(pair.inputs[probes.STATE.key(name)])


def _hidden(pair: Pair, x: torch.Tensor) -> torch.Tensor:
    """relu(proj(x)) in float64: what dropout is applied to."""
    return F.relu(F.linear(_f64(x), _state(pair, "proj.weight"), _state(pair, "proj.bias")))


def _tolerance(pair: Pair, autocast: bool = False) -> checks.Tolerance:
    if autocast:
        half = "bfloat16" if pair.trial.device.startswith("cpu") else "float16"
        return checks.tolerance(half, pair.trial.device)
    return checks.tolerance(pair.trial.dtype, pair.trial.device)


_NO_FC = "`self.fc` was never called. The head must pass its features through its `fc` submodule: `return self.fc(x)`."
_FC_SHAPE = "The input of `fc` should have the shape of relu(proj(x))."


def _fc_input(ev: Evidence, pair: Pair, key: str = "fc input") -> torch.Tensor | Verdict:
    got = pair.got.values.get(key)
    if got is None:
        if pair.got.error is not None:
            return checks.missing(ev, pair, key)
        return checks.failed(exercise_say("In {trial}: {problem}", trial=pair.label, problem=_NO_FC), _NO_FC)
    x = pair.inputs["x other wide"][:, ::2] if key == OTHER else pair.inputs["x"]
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        return checks.failed(exercise_say("In {trial}: the input of `fc` should have the shape of relu(proj(x)).",
                                          trial=pair.label), _FC_SHAPE)
    return got


def _dropout_problem(pair: Pair, fc_in: torch.Tensor, x: torch.Tensor, call: str = "") -> Verdict | None:
    """Why `fc_in` is not dropout of relu(proj(x)) with the trial's p (None when it is): every entry 0 or
    relu(proj(x)) / (1 - p), about a fraction p of them 0."""
    fc_in, a, p, tol = fc_in.double(), _hidden(pair, x), _p(pair), _tolerance(pair)
    kept = fc_in != 0
    where = exercise_say("in {trial} (ClassifierHead {built}, training mode{call})", trial=pair.label,
                         built=_how_built(pair), call=call)
    active = a > MARGIN * tol.atol
    if p > 0 and kept[active].all() and checks.mismatch(fc_in, a, tol) is None:
        return checks.failed(exercise_say("`fc` received relu(proj(x)) with nothing dropped: dropout with p = {p:g} "
                                          "must act on the features before `fc`, {where}.", p=p, where=where),
                             exercise_say("`fc` received relu(proj(x)) with nothing dropped: dropout must act on the "
                                          "features before `fc` (training mode{call})", call=call))
    if checks.mismatch(fc_in, torch.where(kept, a / (1 - p), 0.0), tol) is not None:
        sure = kept & active
        scale = (fc_in[sure] / a[sure]).median().item() if sure.any() else float("nan")
        return checks.failed(exercise_say("Dropout should zero some entries of relu(proj(x)) and multiply the others "
                                          "by 1/(1-p) = {factor:.3g}; the kept entries of the input of `fc` "
                                          "are not that (they are about {scale:.3g} times relu(proj(x))), {where}.",
                                          factor=1 / (1 - p), scale=scale, where=where),
                             exercise_say("Dropout should zero some entries of relu(proj(x)) and multiply the others "
                                          "by 1/(1-p); the kept entries of the input of `fc` are not that (training "
                                          "mode{call})", call=call))
    n = int(active.sum())
    if n == 0:
        raise GraderError(f"{pair.label}: no positive features to measure the drop rate on")
    dropped = int((active & ~kept).sum()) / n
    slack = SIGMAS * math.sqrt(p * (1 - p) / n) + 0.5 / n
    if abs(dropped - p) > slack:
        return checks.failed(exercise_say("Dropout zeroed {dropped:.1%} of the positive features; with p = {p:g} it "
                                          "should zero about {p:.0%} (within {slack:.1%}), {where}.",
                                          dropped=dropped, p=p, slack=slack, where=where),
                             exercise_say("Dropout zeroed a fraction of the positive features far from p = drop_rate "
                                          "(training mode{call})", call=call))
    return None


def _dropout(scenarios: tuple[str, ...], calls: tuple[str, ...]) -> Rule:
    """Every call's input of fc is dropout of relu(proj(x)); in `calls`, two calls on one input draw different
    masks, and a third call on another batch (not contiguous) is dropout of its own input."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            fc_in = _fc_input(ev, pair)
            if isinstance(fc_in, Verdict):
                return fc_in
            problem = _dropout_problem(pair, fc_in, pair.inputs["x"])
            if problem is not None:
                return problem
            if pair.trial.scenario not in calls:
                continue
            if pair.got.values.get(MASKS_DIFFER) is not True:
                said = ("Two calls on the same input dropped the same features: dropout must draw a new random "
                        "mask at every call (no fixed seed, no mask kept from an earlier call)")
                return checks.failed(exercise_say("{said}, in {trial}.", said=said, trial=pair.label), said)
            other = _fc_input(ev, pair, OTHER)
            if isinstance(other, Verdict):
                return other
            problem = _dropout_problem(pair, other, pair.inputs["x other wide"][:, ::2],
                                       ", a later call with a batch of another size")
            if problem is not None:
                return problem
        return PASS

    return Rule(evaluate, (*scenarios, *calls), ("fc input", MASKS_DIFFER, OTHER))


def _in_place(scenarios: tuple[str, ...]) -> Rule:
    """In training, fc receives proj's output tensor itself: nothing new is allocated between them."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            if IN_PLACE not in pair.got.values:
                return checks.missing(ev, pair, IN_PLACE, "where `fc`'s input came from")
            if pair.got.values[IN_PLACE] is not True:
                said = ("In training mode `fc` did not receive `proj`'s output tensor itself: something between "
                        "them made a new tensor (an out-of-place dropout or ReLU, a clone). Keep the memory "
                        "saving: change `proj`'s output in place, in an order autograd allows")
                return checks.failed(exercise_say("{said}, in {trial}.", said=said, trial=pair.label), said)
        return PASS

    return Rule(evaluate, scenarios, (IN_PLACE,))


def _fc_consistent(scenarios: tuple[str, ...]) -> Rule:
    """Training-mode output is fc applied to what fc received: nothing happens after fc."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            fc_in = _fc_input(ev, pair)
            if isinstance(fc_in, Verdict):
                return fc_in
            if "output" not in pair.got.values:
                return checks.missing(ev, pair, "output")
            want = F.linear(fc_in.double(), _state(pair, "fc.weight"), _state(pair, "fc.bias"))
            problem = checks.mismatch(pair.got.values["output"], want, _tolerance(pair))
            if problem:
                said = ("Forward output: in training mode the output should be fc(dropout(relu(proj(x)))), but it is "
                        "not fc of what `fc` received")
                return checks.failed(exercise_say("{said}: it {problem}, in {trial}.", said=said, problem=problem,
                                                  trial=pair.label),
                                     exercise_say("{said}: it {miss}", said=said,
                                                  miss=checks.miss_kind(pair.got.values["output"], want)))
        return PASS

    return Rule(evaluate, scenarios, ("fc input", "output"))


def _mask_reference(pair: Pair, fc_in: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradients, in float64, of fc(relu(proj(x)) * mask) with the mask the student's dropout drew.

    fc_in != 0 exactly where relu was active and dropout kept the entry, so one mask stands for both:
    the reference never decides a relu sign of its own, which rounding could flip.
    """
    x = _f64(pair.inputs["x"]).requires_grad_(True)
    params = {n: _state(pair, n).requires_grad_(True) for n in PARAMS}
    mask = (fc_in != 0).double() / (1 - _p(pair))
    h = F.linear(x, params["proj.weight"], params["proj.bias"]) * mask
    probes.backward_with(F.linear(h, params["fc.weight"], params["fc.bias"]), _f64(pair.inputs["grad_output"]))
    grads = {GRAD.key("x"): x.grad, **{GRAD.key(n): p.grad for n, p in params.items()}}
    missing = [key for key, grad in grads.items() if grad is None]
    if missing:
        raise GraderError(f"the dropout reference computed no {', '.join(missing)}")
    return {key: grad for key, grad in grads.items() if grad is not None}


def _gradients(scenarios: tuple[str, ...], what: str, autocast: bool = False) -> Rule:
    """Gradients of x and every parameter equal the mask-based reference within the trial's tolerance."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            fc_in = _fc_input(ev, pair)
            if isinstance(fc_in, Verdict):
                return fc_in
            for key, want in _mask_reference(pair, fc_in).items():
                if key not in pair.got.values:
                    return checks.missing(ev, pair, key)
                got, note = pair.got.values[key], ""
                if isinstance(got, str):
                    return checks.failed(exercise_say("{what}: {got}, in {trial}.", what=what, got=got,
                                                      trial=pair.label),
                                         exercise_say("{what}: {name} {miss}", what=what, name=ev.shown_name(key),
                                                      miss=checks.miss_kind(got, want)))
                if autocast:
                    scale = want.abs().max().clamp_min(AUTOCAST_SCALE)
                    got, want, note = got.double() / scale, want / scale, ", errors relative to its largest entry"
                problem = checks.mismatch(got, want, _tolerance(pair, autocast))
                if problem:
                    return checks.failed(exercise_say("{what}: `{key}` {problem}, in {trial} (compared with the "
                                                      "gradient for the dropout mask your forward drew{note}).",
                                                      what=what, key=key, problem=problem, trial=pair.label,
                                                      note=note),
                                         exercise_say("{what}: {name} {miss} (compared with the gradient for the "
                                                      "dropout mask your forward drew)", what=what,
                                                      name=ev.shown_name(key), miss=checks.miss_kind(got, want)))
        return PASS

    return Rule(evaluate, scenarios, ("fc input", GRAD))


PUBLIC_TRAIN, PUBLIC_EVAL, GRADCHECK = "public train", "public eval", "gradcheck"
TRAIN, DEFAULT, NO_DROP, EVAL, AUTOCAST = "train", "default drop_rate", "drop_rate 0", "eval", "autocast"
CALLS = "three calls"
NO_GRAD, INFERENCE = "training mode under no_grad", "training mode under inference_mode"
TRAINING = (PUBLIC_TRAIN, TRAIN, DEFAULT, NO_DROP)
F32, F64 = (torch.float32,), (torch.float64,)
FORWARD = checks.all_of(
    checks.matches_reference(("output",), "Eval-mode output (dropout does nothing in eval mode)", (PUBLIC_EVAL,)),
    _fc_consistent(TRAINING))
DROPOUT = _dropout((*TRAINING, NO_GRAD, INFERENCE), (CALLS,))
BACKWARD = checks.completes((*TRAINING, CALLS), "Backward")
NEEDS = ("the forward must first be right, dropout real dropout, and backward run (the checks `forward`, "
         "`dropout` and `backward runs`)")

EXERCISE = Exercise(
    id="inplace_dropout",
    number=4,
    title="In-place dropout",
    rewrites=False,  # the locator's usual rewrite (dropout out of place) is what the task rules out
    defines=(Symbol("ClassifierHead", "class", ("in_features", "num_classes", "drop_rate")),),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        Scenario(PUBLIC_TRAIN, _drawer(128, 32, 5, 0.3), _forward_backward(train=True), FORWARD_BACKWARD_WRITES,
                 public=True),
        Scenario(PUBLIC_EVAL, _drawer(8, 16, 5, 0.3), _forward_backward(train=False), FORWARD_BACKWARD_WRITES,
                 public=True),
        Scenario(GRADCHECK, _drawer(4, 6, 3, 0.3), _gradcheck, (finite_differences.OBSERVED,), dtypes=F64,
                 public=True),
        Scenario(TRAIN, _drawer(256, 64, 10, 0.3), _forward_backward(train=True), FORWARD_BACKWARD_WRITES),
        Scenario(DEFAULT, _drawer(256, 64, 10, None), _forward_backward(train=True), FORWARD_BACKWARD_WRITES,
                 dtypes=F32),
        Scenario(NO_DROP, _drawer(32, 16, 4, 0.0), _forward_backward(train=True), FORWARD_BACKWARD_WRITES),
        Scenario(EVAL, _drawer(32, 24, 6, 0.3), _forward_backward(train=False), FORWARD_BACKWARD_WRITES),
        Scenario(AUTOCAST, _drawer(64, 32, 10, 0.25), _forward_backward(train=True, autocast=True),
                 FORWARD_BACKWARD_WRITES, dtypes=F32),
        Scenario(CALLS, _drawer_calls((48, 96), (24, 48), 6, 0.5), _calls, CALLS_WRITES),
        Scenario(NO_GRAD, _drawer(96, 32, 5, 0.4), _without_grad(inference=False), NO_GRAD_WRITES),
        Scenario(INFERENCE, _drawer(96, 32, 5, 0.3), _without_grad(inference=True), NO_GRAD_WRITES, dtypes=F32),
    ),
    checks=checks.gate_checks(
        checks.all_of(FORWARD, DROPOUT, BACKWARD), NEEDS,
        Check("forward", 1, "Eval-mode output equals fc(relu(proj(x))); in training mode the output is fc "
              "of what `fc` received.", FORWARD, public=True),
        Check("dropout", 2, "In training mode `fc` receives relu(proj(x)) with each entry zeroed or scaled by "
              "1/(1-p), about a fraction p zeroed, p = drop_rate (0.2 by default; 0 means no dropout); each call "
              "draws a new mask, for batches of any size and layout, and whether gradients are recorded or not "
              "(torch.no_grad, torch.inference_mode: Monte Carlo dropout).", DROPOUT, public=True),
        Check("backward runs", 1, "loss.backward() runs through the head in training mode.", BACKWARD, public=True),
        Check("gradients", 1, "Gradients of the input and of every parameter match those of the dropout mask "
              "the forward drew, in float32 and float64.", _gradients((TRAIN, DEFAULT, NO_DROP), "Gradient")),
        Check("gradcheck", 1, "Analytic gradients agree with finite differences (float64 gradcheck, training "
              "mode, one fixed dropout mask).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
        Check("in place", 1, "The memory saving is kept: in training mode `fc` receives `proj`'s output tensor "
              "itself, changed in place (no new tensor between them).",
              _in_place((*TRAINING, AUTOCAST, CALLS)), public=True),
        Check("train and eval", 1, "Eval mode is deterministic: no dropout, output and gradients as the "
              "reference's.", checks.matches_reference(("output", GRAD), "Eval mode (no dropout)", (EVAL,))),
        Check("autocast", 1, "Forward and backward run under torch.autocast (bfloat16 on the CPU, float16 on "
              "CUDA), with gradients close to the exact ones for the same dropout mask.",
              checks.all_of(checks.completes((AUTOCAST,), "Training under autocast"),
                            _gradients((AUTOCAST,), "Gradient under autocast", autocast=True))),
        Check("caller's tensors unchanged", 1, "The input tensor `x` is not modified by forward or backward.",
              checks.holds("x unchanged", (PUBLIC_TRAIN, TRAIN, DEFAULT, NO_DROP),
                           "Your head changed the caller's `x` in place"), public=True),
    ),
)

CONTRACT = contract.Contract("ClassifierHead", (
    contract.Dimension(contract.MODE, ("train", "eval"), "training=self.training; nothing dropped in eval mode"),
    contract.Dimension(contract.GRAD_MODE, ("enabled", "no_grad", "inference"),
                       "fc(dropout(relu(proj(x)), p=drop_rate, training=self.training)): dropout follows the "
                       "mode, not whether gradients are recorded (Monte Carlo dropout runs under no_grad)"),
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "batches of any size and layout"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32, and float64 for the gradcheck"),
    contract.Dimension(contract.CALLS, ("one", "several"), "a new random mask at every call"),
))
"""The situations the notebook lets the head meet (tests/test_contracts_spanned.py measures them)."""
