"""Is a rewrite right? Run the rewritten program and the reference, each in a fresh interpreter (runs.py), and compare.

"Verified" means all of:
1. the error is gone: the rewritten program runs to its end with the reference's exit status, raising nothing;
2. it computes what the program computed: the values each backward pass starts from (the loss, and so every
   forward value it is made of) are equal, pass by pass;
3. what the program uses of its gradients is equal, within the named tolerance of the dtype:
   - at each optimizer step (the first `MAX_STEPS` of each optimizer), the `.grad` of every parameter of that
     optimizer: what the step consumes; the optimizers must step the same parameters, as many times;
   - after each backward pass (the first `MAX_BACKWARDS`), the `.grad` of every leaf tensor no optimizer
     steps (an input with `requires_grad`, a parameter updated by hand), whether the pass reached it or not,
     and of every leaf the pass reached in both runs (a pass kept to some parameters with `inputs=` reaches
     fewer); a leaf that got a gradient in the reference must get one;
   - when the program ends, the value of every leaf (an update that used other gradients shows there).
   So the `.grad` of an optimizer's parameter after a pass that reached it in one run only is not compared:
   a rewrite that keeps a backward away from parameters another optimizer steps (`restrict_backward`,
   `move_step`) leaves their `.grad` without that backward's share, which changes nothing when no step
   uses it, and the comparison at each step checks that none does.

The reference (gradients.py) is the original program with every tensor autograd saves cloned as it is saved,
so that no write reaches what backward reads: what the program computes, and the gradients it meant. For a
rewrite that claims to make the culprit out of place (`+=` expanded, `inplace=True` dropped), the reference
is the program with the culprit call itself run out of place, and that reference must itself compute what
the program computed (2 and 3 above): a write through another name (`h = feats[0]; h += b`) then shows, as
other forward values and a leaf without its gradient, and the claim is refused before any rewrite is tried.
A rewrite that keeps the write (a `clone()` first) is compared with the write kept. A detached recurrent
state promises other maths (truncated backpropagation through time), so it is compared with the "truncated"
reference, in which each backward stops at the graph built before the previous one.

Both run with float64 as the default dtype where the program allows it (the rewrite's rounding then hides
below the tolerance), else in the program's own dtypes. What this cannot see: a program that reads an
optimizer's parameter's `.grad` other than through a step (prints or logs it, keeps the norm that
`clip_grad_norm_` returns) after a pass the rewrite kept away from it; gradients taken with
`torch.autograd.grad` (they reach no `.grad`); tensors no backward reaches and forward values no loss is made
of; leaves created in a different order by the rewrite (then reported as a mismatch, never as equal);
anything after `MAX_BACKWARDS` passes or `MAX_STEPS` steps of an optimizer except the final values; a program
that draws random numbers differently after the rewrite fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ...feedback.wording import say
from .gradients import MAX_BACKWARDS, MAX_STEPS
from .runs import RUN_TIMEOUT, Program, record


@dataclass(frozen=True)
class RewriteTolerance:
    rtol: float
    atol: float
    why: str


TOLERANCES = {
    True: RewriteTolerance(1e-9, 1e-12, say("blame: tolerance float64")),
    False: RewriteTolerance(1e-5, 1e-7, say("blame: tolerance float32")),
}
"""By whether the runs used float64."""


@dataclass(frozen=True)
class Verification:
    """What comparing a run with its reference found."""

    error_gone: bool
    same_results: bool
    """The forward values, the gradients used and the final values are equal (see the module's docstring)."""
    detail: str
    """One sentence: what was compared and how far apart, or why it could not be."""

    @property
    def verified(self) -> bool:
        return self.error_gone and self.same_results


def reference(program: Program, mode: str, timeout: float = RUN_TIMEOUT,
              out_of_place: tuple[str, ...] = ()) -> dict[str, Any]:
    """The reference recording, in float64 when the program runs in it, else in its own dtypes."""
    first = record(program, mode, True, timeout, out_of_place)
    if first["error"] is None:
        return first
    return record(program, mode, False, timeout, out_of_place)


def verify(program: Program, ref: dict[str, Any], timeout: float = RUN_TIMEOUT) -> tuple[Verification, dict]:
    """Runs the (rewritten) program as the reference ran and compares. Returns the verification and the recording."""
    fixed = record(program, "plain", ref["float64"], timeout)
    return compare(ref, fixed), fixed


def compare(ref: dict[str, Any], fixed: dict[str, Any]) -> Verification:
    """The rewritten program's recording against the reference's (the module's docstring says what is equal)."""
    if ref["error"] is not None:
        return Verification(False, False, say("blame: reference fails", type=ref["error"]["type"],
                                              message=ref["error"]["message"][:200]))
    error = fixed["error"]
    if error is not None:
        message = error["message"][:200]
        return Verification(False, False, say("blame: the in-place error remains", type=error["type"], message=message)
                            if error["inplace"] else say("blame: it now raises", type=error["type"], message=message))
    if fixed["status"] != ref["status"]:
        return Verification(False, False, say("blame: other exit status", status=fixed["status"],
                                              reference=ref["status"]))
    if fixed["count"] != ref["count"]:
        return Verification(True, False, say("blame: other backward count", count=fixed["count"],
                                             reference=ref["count"]))
    tol = TOLERANCES[bool(ref["float64"])]
    other = _other_values(ref.get("roots", []), fixed.get("roots", []), tol)
    if other:
        return Verification(True, False, say("blame: other values", other=other))
    if len(fixed["shapes"]) < len(ref["shapes"]):
        return Verification(True, False, say("blame: fewer leaves", count=len(fixed["shapes"]),
                                             reference=len(ref["shapes"])))
    if fixed["shapes"] != ref["shapes"]:
        return Verification(True, False, say("blame: other leaves", count=len(fixed["shapes"]),
                                             reference=len(ref["shapes"])))
    if _step_counts(fixed) != _step_counts(ref):
        return Verification(True, False, say("blame: other steps"))
    owned = {i for key in _step_counts(ref) for i in key}
    worst = 0.0
    for where, pairs in _compared(ref, fixed, owned):
        for i, x, y in pairs:
            if y is None and x is not None and bool(x.ne(0).any()):
                return Verification(True, False, say("blame: leaf without gradient", index=i, shape=list(x.shape),
                                                     where=where))
            x, y = _zeros_for_none(x, y), _zeros_for_none(y, x)
            if x is None:
                continue
            assert y is not None  # _zeros_for_none leaves None only where both were None
            if not torch.allclose(y, x, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
                return Verification(True, False, say("blame: leaf differs", index=i, shape=list(x.shape), where=where,
                                                     difference=(y - x).abs().max().item(), rtol=tol.rtol,
                                                     atol=tol.atol))
            if x.numel():
                worst = max(worst, (y - x).abs().max().item())
    if ref.get("out_of_place_calls") == 0:
        return Verification(True, False, say("blame: claim not checked"))
    return Verification(True, True, say("blame: equal", compared=_what_was_compared(ref, owned), worst=worst,
                                        tolerance=tol.why, rtol=tol.rtol, atol=tol.atol))


def partial_compare(ref: dict[str, Any], stopped: dict[str, Any]) -> str | None:
    """For a run that stopped at another in-place error: where the losses it computed before stopping differ
    from the reference's, or None when they are equal (its gradients are checked once the program runs)."""
    return _other_values(ref.get("roots", []), stopped.get("roots", []), TOLERANCES[bool(ref["float64"])])


def _step_counts(recording: dict[str, Any]) -> dict[tuple[int, ...], int]:
    """How many times each optimizer stepped, by the leaf indices of its parameters."""
    return {tuple(key): n for key, n in recording["step_counts"]}


def _compared(ref: dict[str, Any], fixed: dict[str, Any], owned: set[int]) -> Iterator[tuple[str, list]]:
    """(where, [(leaf index, reference's tensor, rewrite's tensor)]) for each comparison, in the order made:
    - before each recorded optimizer step, the gradients of that optimizer's parameters (what the step uses);
    - after each recorded backward pass, the gradients of the leaves no optimizer steps, and of the leaves
      that pass reached in both runs (a pass restricted with `inputs=` reaches fewer);
    - at the end, the values of every leaf."""
    for key, (a, b) in _steps_by_optimizer(ref, fixed).items():
        for n, (x, y) in enumerate(zip(a, b), 1):
            yield say("blame: at step", step=n, optimizer=key), list(zip(x["params"], x["grads"], y["grads"]))
    for k, (a, b) in enumerate(zip(ref["backwards"], fixed["backwards"])):
        both = set(ref["reached"][k]) & set(fixed["reached"][k])
        yield say("blame: after backward", number=k + 1), [(i, x, y) for i, (x, y) in enumerate(zip(a, b))
                                          if i not in owned or i in both]
    yield say("blame: at the end"), [(i, x, y) for i, (x, y) in enumerate(zip(ref["final"], fixed["final"]))]


def _steps_by_optimizer(ref: dict[str, Any], fixed: dict[str, Any]) -> dict[int, tuple[list, list]]:
    """The recorded steps of each optimizer in both runs, the optimizers numbered from 1 in the reference's
    order (steps of different optimizers may come in another order after a rewrite: each sees its own)."""
    keys = list(dict.fromkeys(tuple(s["params"]) for s in ref["steps"]))
    return {n: ([s for s in ref["steps"] if tuple(s["params"]) == key],
                [s for s in fixed["steps"] if tuple(s["params"]) == key]) for n, key in enumerate(keys, 1)}


def _what_was_compared(ref: dict[str, Any], owned: set[int]) -> str:
    passes = min(ref["count"], MAX_BACKWARDS)
    after = say("blame: the backward pass") if passes == 1 else say("blame: the first backward passes", count=passes)
    leaves = say("blame: leaf tensors", count=len(ref["shapes"]), s=_s(len(ref["shapes"])))
    loss = say("blame: the loss") if passes == 1 else say("blame: the losses")
    if not owned:
        return say("blame: compared, no optimizer", loss=loss, leaves=leaves, after=after)
    steps = sum(n for _, n in ref["step_counts"])
    used = (say("blame: each optimizer step", count=steps, s=_s(steps)) if steps == len(ref["steps"])
            else say("blame: the first steps", count=MAX_STEPS))
    return say("blame: compared, with optimizers", loss=loss, used=used, after=after, leaves=leaves)


def _s(n: int) -> str:
    """The plural ending for a count of `n`."""
    return "s" if n != 1 else ""


def _zeros_for_none(x: torch.Tensor | None, other: torch.Tensor | None) -> torch.Tensor | None:
    """No gradient and a zero gradient are the same maths."""
    return torch.zeros_like(other) if x is None and other is not None else x


def _other_values(ref: list, fixed: list, tol: RewriteTolerance) -> str | None:
    """Where the values backward starts from (the losses) differ, in words; None when they are equal."""
    for k, (a, b) in enumerate(zip(ref, fixed), 1):
        for x, y in zip(a, b):
            if x is None or y is None:
                continue
            if x.shape != y.shape:
                return say("blame: other root shape", number=k, shape=list(y.shape), reference=list(x.shape))
            if not torch.allclose(y, x, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
                if x.numel() == 1:
                    return say("blame: other loss", number=k, loss=y.item(), reference=x.item())
                return say("blame: other root", shape=list(x.shape), number=k, difference=(y - x).abs().max().item())
    return None
