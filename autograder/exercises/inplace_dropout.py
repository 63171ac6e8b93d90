"""The exercise inplace_dropout: `F.dropout(..., inplace=True)` after a ReLU in a classifier head (seed 000, timm MobileNetV4).

`relu` saves its output for backward; in-place dropout overwrites that output, so backward raises, in
float32 and under autocast alike. Dropout is random, so no check compares with one random stream: the
input of `fc` is observed, and the checks judge it (zeros, or relu(proj(x)) / (1 - p), about a fraction
p of zeros) and recompute the gradients with the mask it shows.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import checks, finite_differences, probes
from ..evidence import Evidence, GraderError, Pair
from ..messages import INPLACE_ERROR
from ..probes import GRAD
from ..spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict

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


def _forward_backward(train: bool, autocast: bool = False):
    def run(ns, inputs, device, obs):
        model = _build(ns, inputs, device, inputs["x"].dtype)
        model.train(train)
        model.fc.register_forward_pre_hook(lambda _, args: obs.__setitem__("fc input", args[0].detach().clone()))
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


FORWARD_BACKWARD_WRITES = ("fc input", "output", "x unchanged", GRAD)


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


def _hidden(pair: Pair) -> torch.Tensor:
    """relu(proj(x)) in float64: what dropout is applied to."""
    return F.relu(F.linear(_f64(pair.inputs["x"]), _state(pair, "proj.weight"), _state(pair, "proj.bias")))


def _tolerance(pair: Pair, autocast: bool = False) -> checks.Tolerance:
    if autocast:
        half = "bfloat16" if pair.trial.device.startswith("cpu") else "float16"
        return checks.tolerance(half, pair.trial.device)
    return checks.tolerance(pair.trial.dtype, pair.trial.device)


_NO_FC = "`self.fc` was never called. The head must pass its features through its `fc` submodule: `return self.fc(x)`."
_FC_SHAPE = "The input of `fc` should have the shape of relu(proj(x))."


def _fc_input(ev: Evidence, pair: Pair) -> torch.Tensor | Verdict:
    got = pair.got.values.get("fc input")
    if got is None:
        if pair.got.error is not None:
            return checks.missing(ev, pair, "fc input")
        return checks.failed(f"In {pair.label}: {_NO_FC}", _NO_FC)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(pair.inputs["x"].shape):
        return checks.failed(f"In {pair.label}: {_FC_SHAPE[0].lower()}{_FC_SHAPE[1:]}", _FC_SHAPE)
    return got


def _dropout(scenarios: tuple[str, ...]) -> Rule:
    """Every entry of fc's input is 0 or relu(proj(x)) / (1 - p); about a fraction p of them are 0."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            fc_in = _fc_input(ev, pair)
            if isinstance(fc_in, Verdict):
                return fc_in
            fc_in, a, p, tol = fc_in.double(), _hidden(pair), _p(pair), _tolerance(pair)
            kept = fc_in != 0
            where = f"in {pair.label} (ClassifierHead {_how_built(pair)}, training mode)"
            active = a > MARGIN * tol.atol
            if p > 0 and kept[active].all() and checks.mismatch(fc_in, a, tol) is None:
                return checks.failed(f"`fc` received relu(proj(x)) with nothing dropped: dropout with p = {p:g} "
                                     f"must act on the features before `fc`, {where}.",
                                     "`fc` received relu(proj(x)) with nothing dropped: dropout must act on the "
                                     "features before `fc` (training mode)")
            if checks.mismatch(fc_in, torch.where(kept, a / (1 - p), 0.0), tol) is not None:
                sure = kept & active
                scale = (fc_in[sure] / a[sure]).median().item() if sure.any() else float("nan")
                return checks.failed(f"Dropout should zero some entries of relu(proj(x)) and multiply the others "
                                     f"by 1/(1-p) = {1 / (1 - p):.3g}; the kept entries of the input of `fc` "
                                     f"are not that (they are about {scale:.3g} times relu(proj(x))), {where}.",
                                     "Dropout should zero some entries of relu(proj(x)) and multiply the others by "
                                     "1/(1-p); the kept entries of the input of `fc` are not that (training mode)")
            n = int(active.sum())
            if n == 0:
                raise GraderError(f"{pair.label}: no positive features to measure the drop rate on")
            dropped = int((active & ~kept).sum()) / n
            slack = SIGMAS * math.sqrt(p * (1 - p) / n) + 0.5 / n
            if abs(dropped - p) > slack:
                return checks.failed(f"Dropout zeroed {dropped:.1%} of the positive features; with p = {p:g} it "
                                     f"should zero about {p:.0%} (within {slack:.1%}), {where}.",
                                     "Dropout zeroed a fraction of the positive features far from p = drop_rate "
                                     "(training mode)")
        return PASS

    return Rule(evaluate, scenarios, ("fc input",))


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
                return checks.failed(f"{said}: it {problem}, in {pair.label}.",
                                     f"{said}: it {checks.miss_kind(pair.got.values['output'], want)}")
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
                    return checks.failed(f"{what}: {got}, in {pair.label}.",
                                         f"{what}: {ev.shown_name(key)} {checks.miss_kind(got, want)}")
                if autocast:
                    scale = want.abs().max().clamp_min(AUTOCAST_SCALE)
                    got, want, note = got.double() / scale, want / scale, ", errors relative to its largest entry"
                problem = checks.mismatch(got, want, _tolerance(pair, autocast))
                if problem:
                    return checks.failed(f"{what}: `{key}` {problem}, in {pair.label} (compared with the "
                                         f"gradient for the dropout mask your forward drew{note}).",
                                         f"{what}: {ev.shown_name(key)} {checks.miss_kind(got, want)} (compared "
                                         "with the gradient for the dropout mask your forward drew)")
        return PASS

    return Rule(evaluate, scenarios, ("fc input", GRAD))


PUBLIC_TRAIN, PUBLIC_EVAL, GRADCHECK = "public train", "public eval", "gradcheck"
TRAIN, DEFAULT, NO_DROP, EVAL, AUTOCAST = "train", "default drop_rate", "drop_rate 0", "eval", "autocast"
TRAINING = (PUBLIC_TRAIN, TRAIN, DEFAULT, NO_DROP)
F32, F64 = (torch.float32,), (torch.float64,)

EXERCISE = Exercise(
    id="inplace_dropout",
    number=4,
    title="In-place dropout",
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
    ),
    checks=(
        Check("forward", 1, "Eval-mode output equals fc(relu(proj(x))); in training mode the output is fc "
              "of what `fc` received.",
              checks.all_of(checks.matches_reference(("output",), "Eval-mode output (dropout does nothing in eval mode)",
                                                     (PUBLIC_EVAL,)),
                            _fc_consistent(TRAINING)), public=True),
        Check("dropout", 2, "In training mode `fc` receives relu(proj(x)) with each entry zeroed or scaled by "
              "1/(1-p), about a fraction p zeroed, p = drop_rate (0.2 by default; 0 means no dropout).",
              _dropout(TRAINING), public=True),
        Check("backward runs", 1, "loss.backward() runs through the head in training mode.",
              checks.completes(TRAINING, "Backward"), public=True),
        Check("gradients", 2, "Gradients of the input and of every parameter match those of the dropout mask "
              "the forward drew, in float32 and float64.", _gradients((TRAIN, DEFAULT, NO_DROP), "Gradient")),
        Check("gradcheck", 1, "Analytic gradients agree with finite differences (float64 gradcheck, training "
              "mode, one fixed dropout mask).",
              finite_differences.agree((GRADCHECK,), "gradcheck found gradients that disagree with finite "
                                       "differences"), public=True),
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
