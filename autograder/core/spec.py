"""The declarative API an exercise is written in.

An exercise says what the student defines (`Symbol`), which situations their code is put in
(`Scenario`: how inputs are drawn, what is observed), and how observations become points (`Check`).
The grader's core only ever sees these values, so a new exercise needs no change to the core.

The agreements between them are stated, and checked when an exercise is defined: a scenario declares the
observations it `writes` (a key, or a `Family` of keys such as one gradient per parameter); a check's `Rule`
declares the scenarios and observations it reads, and sees nothing else; `Exercise` refuses a rule that
names a scenario it does not have or an observation none of that rule's scenarios writes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..feedback.wording import say

if TYPE_CHECKING:
    from .evidence import Evidence

Inputs = dict[str, Any]
"""What a scenario is given: CPU tensors and plain numbers, drawn by the grader."""

Observation = dict[str, Any]
"""What a scenario records: tensors, floats, ints, bools and strings, nothing else."""

FLOAT_DTYPES = (torch.float32, torch.float64)



@dataclass(frozen=True)
class ExpectedError:
    """An error a notebook's failure cell must raise: its type name and a pattern of its message."""

    ename: str
    pattern: re.Pattern[str]

    def matches(self, ename: str, message: str) -> bool:
        return ename == self.ename and self.pattern.search(message) is not None


@dataclass(frozen=True)
class Symbol:
    """A name the student must define: a class or a function, called with these parameters."""

    name: str
    kind: str  # "class" or "function"
    params: tuple[str, ...]

    def problem_with(self, obj: object) -> str | None:
        """Why `obj` cannot serve as this symbol, in words a student can act on; None if it can."""
        if self.kind == "class" and not isinstance(obj, type):
            return say("symbol not a class", symbol=self.name, type=type(obj).__name__)
        if self.kind == "function" and (isinstance(obj, type) or not callable(obj)):
            return say("symbol not a function", symbol=self.name, type=type(obj).__name__)
        target = getattr(obj, "__init__") if isinstance(obj, type) else obj  # noqa: B009 - a class's, not an instance's
        try:
            signature = inspect.signature(target)  # type: ignore[arg-type]  # callable(obj) was checked above
        except (TypeError, ValueError):
            return None  # builtins and C functions: let the call itself decide
        names = [p for p in signature.parameters if p != "self"]
        args = [object()] * len(self.params)
        try:
            signature.bind(*([None] if isinstance(obj, type) else []), *args)
        except TypeError:
            want = ", ".join(self.params)
            have = ", ".join(names)
            return say("symbol signature", symbol=self.name, want=want, have=have)
        return None


@dataclass(frozen=True)
class Family:
    """Observations (or inputs) of one kind, one per member: `GRAD.key("x")` is `grad x`, the gradient of x.

    A check selects a family's keys with the family itself, never with a string prefix."""

    name: str

    def __str__(self) -> str:
        return f"{self.name} …"

    def key(self, *member: object) -> str:
        return " ".join((self.name, *map(str, member)))

    def member(self, key: str) -> str | None:
        """What `key` names within this family (`x` for `grad x`); None if it is not one of its keys."""
        head = self.name + " "
        return key[len(head):] if key.startswith(head) and len(key) > len(head) else None

    def members(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """This family's entries of `values`, by member: `{"x": g}` from `{"grad x": g, "output": y}`."""
        found = {}
        for key, value in values.items():
            member = self.member(key)
            if member is not None:
                found[member] = value
        return found


Selector = tuple[str | Family, ...]
"""Observations named exactly, or by their family."""


def select(selector: Selector, keys: Iterable[str]) -> list[str]:
    """The keys `selector` picks, in its order: each key it names, and every key of each family it names."""
    keys = list(keys)
    chosen: dict[str, None] = {}
    for item in selector:
        chosen.update((k, None) for k in keys if k == item or (isinstance(item, Family) and item.member(k) is not None))
    return list(chosen)


def _shown(item: str | Family) -> str:
    return f"the family `{item}`" if isinstance(item, Family) else f"`{item}`"


@dataclass(frozen=True)
class Scenario:
    """One situation the student's code is put in.

    `draw(generator)` runs in the grader and returns the inputs; `run(namespace, inputs, device, obs)`
    runs wherever the code under test runs (a worker for a submission, the grader for the reference)
    and writes what it sees into `obs` as it goes, so that a failure late in a scenario keeps what was
    observed before it. `writes` names every key `run` may write (tests/test_spec.py holds the reference
    to it).
    """

    name: str
    draw: Callable[[torch.Generator, torch.dtype], Inputs]
    run: Callable[[Mapping[str, Any], Inputs, torch.device, Observation], None]
    writes: Selector
    dtypes: tuple[torch.dtype, ...] = FLOAT_DTYPES
    public: bool = False


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str = ""


PASS = Verdict(True)


@dataclass(frozen=True)
class Rule:
    """How a check judges: `evaluate(evidence) -> Verdict`, pure, seeing the trials of `scenarios` (None:
    every scenario) and only the observations `reads` selects, so that it cannot depend on what it does not
    declare. Evidence.pairs and .observations raise GraderError where they select nothing: a check that
    cannot fail."""

    evaluate: Callable[[Evidence], Verdict]
    scenarios: tuple[str, ...] | None
    reads: Selector

    def __call__(self, evidence: Evidence) -> Verdict:
        return self.evaluate(evidence.within(self.scenarios, self.reads))


@dataclass(frozen=True)
class Check:
    """A named, scored property, judged by its rule; `description` is shown beside its result."""

    name: str
    points: float
    description: str
    rule: Rule
    public: bool = False


LAZY_MODULES = {
    "torch._dynamo": "an optimizer's first step imports it (about a second)",
    "torch.fx.experimental.symbolic_shapes": "a backward given output gradients imports it, with sympy (about 0.3 s)",
}
"""Modules torch imports only when first needed, at a cost a worker should pay before its first job, not in
it. An exercise whose trials need one says so (`Exercise.preload`); tests/test_preload.py runs each
solution in a fresh worker and holds every exercise to what it says."""


@dataclass(frozen=True)
class Exercise:
    """Everything the grader knows about one exercise, but its reference implementation: that lives in
    references/<id>.py, outside the installed package (reference_store)."""

    id: str
    number: int
    title: str
    defines: tuple[Symbol, ...]
    scenarios: tuple[Scenario, ...]
    checks: tuple[Check, ...]
    failure: ExpectedError
    rewrites: bool = True
    """Whether feedback may propose the culprit locator's rewrite of the culprit line. False where the task
    rules that rewrite out (inplace_dropout keeps its writes in place): there the feedback explains in words,
    and never proposes a fix the grade then marks down."""
    preload: tuple[str, ...] = ()
    """Of LAZY_MODULES, those its trials import (a correct answer's): a worker that grades this exercise
    imports them before any job. Where one grades a single exercise (a platform's container), a worker
    imports no other: what an answer imports beyond them, its job pays for."""

    def __post_init__(self) -> None:
        """A misspelt name fails here, when the exercise is defined, not while a class is graded."""
        unknown = [m for m in self.preload if m not in LAZY_MODULES]
        if unknown:
            raise ValueError(f"exercise {self.id!r}: preload {unknown[0]!r} is not one of {', '.join(LAZY_MODULES)}")
        names = [s.name for s in self.scenarios]
        for kind, found in (("scenario", names), ("check", [c.name for c in self.checks])):
            twice = sorted({n for n in found if found.count(n) > 1})
            if twice:
                raise ValueError(f"exercise {self.id!r}: two {kind}s are named {twice[0]!r}")
        for check in self.checks:
            read = check.rule.scenarios if check.rule.scenarios is not None else tuple(names)
            unknown = [n for n in read if n not in names]
            if unknown:
                raise ValueError(f"exercise {self.id!r}, check {check.name!r}: no scenario is named {unknown[0]!r} "
                                 f"(the scenarios: {', '.join(map(repr, names))})")
            if check.public and not any(s.public for s in self.scenarios if s.name in read):
                raise ValueError(f"exercise {self.id!r}, check {check.name!r} is visible but reads no public "
                                 "scenario: the self-check, which runs the visible checks on public trials alone, "
                                 "could never judge it")
            writes = [w for s in self.scenarios if s.name in read for w in s.writes]
            for item in check.rule.reads:
                written = item in writes if isinstance(item, Family) else bool(select(tuple(writes), (item,)))
                if not written:
                    raise ValueError(f"exercise {self.id!r}, check {check.name!r} reads {_shown(item)}, which none "
                                     f"of its scenarios ({', '.join(map(repr, read))}) writes")

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(f"{self.id} has no scenario {name!r}")

    def checks_for(self, public_only: bool) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.public) if public_only else self.checks
