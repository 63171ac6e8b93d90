"""Reusable checks: each factory returns a Rule (spec.py), which declares what it reads.

Tolerances have names and reasons; floats are never compared with `==`. A failure message says what
was checked, in which trial, and how far off it was; each failure also carries the words that may be shown
when it was found on hidden inputs (evidence.Failed): what was checked and the kind of miss, no number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ..feedback.wording import say
from .evidence import Evidence, Failed, Pair, failed
from .spec import PASS, Check, Rule, Selector, Verdict


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


TOLERANCES: dict[tuple[str, str], Tolerance] = {
    ("float64", "cpu"): Tolerance(1e-7, 1e-9),  # float64 on the CPU: only the order of sums differs
    ("float32", "cpu"): Tolerance(1e-4, 1e-5),  # float32: eps 1.2e-7 times reductions of a few hundred terms
    ("float64", "cuda"): Tolerance(1e-6, 1e-8),  # cuDNN and cuBLAS choose other algorithms than the CPU
    ("float32", "cuda"): Tolerance(2e-3, 2e-4),  # TF32 matmuls and convolutions keep 10 mantissa bits
    ("bfloat16", "cpu"): Tolerance(5e-2, 5e-2),  # bfloat16 keeps 8 mantissa bits
    ("bfloat16", "cuda"): Tolerance(5e-2, 5e-2),  # bfloat16 keeps 8 mantissa bits
    ("float16", "cuda"): Tolerance(1e-2, 1e-2),  # float16 keeps 11 mantissa bits
    ("float16", "cpu"): Tolerance(1e-2, 1e-2),  # float16 keeps 11 mantissa bits
}


def tolerance(dtype: str, device: str) -> Tolerance:
    return TOLERANCES[(dtype, device.split(":")[0])]


def mismatch(got: object, want: torch.Tensor, tol: Tolerance) -> str | None:
    """Why `got` is not `want` within `tol`, or None when it is."""
    if isinstance(got, str):
        return got
    if not isinstance(got, torch.Tensor):
        return say("problem not a tensor", type=type(got).__name__)
    if tuple(got.shape) != tuple(want.shape):
        return say("problem shape", got=tuple(got.shape), want=tuple(want.shape))
    if want.is_floating_point() or got.is_floating_point():
        g, w = got.double(), want.double()
        if torch.isnan(g).any() and not torch.isnan(w).any():
            return say("problem nan")
        if torch.allclose(g, w, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
            return None
        err = (g - w).abs().nan_to_num(float("inf"))
        rel = (err / w.abs().clamp_min(tol.atol)).max().item()
        return say("problem differs", error=err.max().item(), relative=rel, rtol=tol.rtol)
    if torch.equal(got, want):
        return None
    return say("problem entries", count=int((got != want).sum()), total=want.numel())


def miss_kind(got: object, want: object) -> str:
    """What `mismatch` found, in words that hold no number and nothing of `got`: for hidden inputs."""
    if isinstance(got, str):
        return say("miss no value")
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return say("miss not a tensor")
        if tuple(got.shape) != tuple(want.shape):
            return say("miss shape")
        if got.is_floating_point() and torch.isnan(got).any() and not torch.isnan(want.double()).any():
            return say("problem nan")
        return say("miss differs")
    return say("miss value")


def why_missing(ev: Evidence, pair: Pair, key: str) -> str:
    """The message for an observation that was never made: the error that stopped it, if any."""
    if pair.got.error is not None:
        return say("in trial", trial=pair.label, explanation=ev.explain(pair.got.error))
    return say("not observed", trial=pair.label, key=key)


def missing(ev: Evidence, pair: Pair, key: str, shown: str | None = None) -> Failed:
    """The failure for an observation that was never made (why_missing); on hidden inputs, the error that
    stopped it is described by grade.py, from its type and line."""
    name = shown or ev.shown_name(key)
    if pair.got.error is not None:
        return failed(why_missing(ev, pair, key), say("hidden not computed", what=name), trial=pair.trial,
                      error=pair.got.error)
    return failed(why_missing(ev, pair, key), say("hidden not observed", what=name), trial=pair.trial)


def matches_reference(reads: Selector, what: str, scenarios: tuple[str, ...] | None = None) -> Rule:
    """Every observation `reads` selects equals the reference's, within the trial's tolerance."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair, key in ev.observations():
            if key not in pair.got.values:
                found = missing(ev, pair, key)
                return replace(found, hidden=say("hidden detail", what=what, detail=found.hidden))
            want = pair.want.values[key]
            got = pair.got.values[key]
            if isinstance(want, float):
                got = torch.tensor(float(got)) if isinstance(got, (int, float)) else got
                want = torch.tensor(want)
            if isinstance(want, torch.Tensor):
                problem = mismatch(got, want, tolerance(pair.trial.dtype, pair.trial.device))
            else:
                problem = None if got == want else say("problem is", got=repr(got), want=repr(want))
            if problem:
                return failed(say("mismatch", what=what, key=key, problem=problem, trial=pair.label),
                              say("hidden miss", what=what, name=ev.shown_name(key), miss=miss_kind(got, want)),
                              trial=pair.trial)
        return PASS

    return Rule(evaluate, scenarios, reads)


def completes(scenarios: tuple[str, ...], what: str) -> Rule:
    """The trials of these scenarios ran to the end without raising."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            if pair.got.error is not None:
                return failed(say("step failed", what=what, trial=pair.label, explanation=ev.explain(pair.got.error)),
                              say("hidden step failed", what=what),
                              trial=pair.trial, error=pair.got.error)
        return PASS

    return Rule(evaluate, scenarios, ())


def holds(key: str, scenarios: tuple[str, ...], failure: str) -> Rule:
    """A boolean observation is True in every trial of these scenarios; `failure` says what it means."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            if key not in pair.got.values:
                return missing(ev, pair, key)
            if pair.got.values[key] is not True:
                return failed(say("does not hold", failure=failure, trial=pair.label),
                              say("hidden holds not", failure=failure), trial=pair.trial)
        return PASS

    return Rule(evaluate, scenarios, (key,))


def all_of(*rules: Rule) -> Rule:
    """Passes when every rule passes; reports the first failure. Reads what its rules read."""

    def evaluate(ev: Evidence) -> Verdict:
        for rule in rules:
            verdict = rule(ev)
            if not verdict.passed:
                return verdict
        return PASS

    every = any(r.scenarios is None for r in rules)
    scenarios = None if every else tuple(dict.fromkeys(s for r in rules for s in r.scenarios or ()))
    return Rule(evaluate, scenarios, tuple(dict.fromkeys(item for r in rules for item in r.reads)))


def gated(rule: Rule, gate: Rule, needs: str) -> Rule:
    """`rule`, counted only where `gate` passes too. Some checks hold for code that does nothing, or that still
    raises the exercise's error (the caller's tensors are unchanged, a gradient check of a function that is not
    the exercise's): they earn nothing until the answer does what the exercise is about. `needs` says what that
    is, in words that name no input (they are shown for hidden trials too). The check's own failure comes first."""

    def evaluate(ev: Evidence) -> Verdict:
        verdict = rule(ev)
        if not verdict.passed or gate(ev).passed:
            return verdict
        text = say("not counted yet", needs=needs)
        return failed(text, text)

    every = rule.scenarios is None or gate.scenarios is None
    scenarios = None if every else tuple(dict.fromkeys((*(rule.scenarios or ()), *(gate.scenarios or ()))))
    return Rule(evaluate, scenarios, tuple(dict.fromkeys((*rule.reads, *gate.reads))))


def gate_checks(gate: Rule, needs: str, *checks: Check) -> tuple[Check, ...]:
    """Every check, counted only where `gate` passes (gated): what an exercise's EXERCISE lists as its checks."""
    return tuple(replace(check, rule=gated(check.rule, gate, needs)) for check in checks)
