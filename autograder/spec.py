"""The declarative API an exercise is written in.

An exercise says what the student defines (`Symbol`), which situations their code is put in
(`Scenario`: how inputs are drawn, what is observed), and how observations become points (`Check`).
The grader's core only ever sees these values, so a new exercise needs no change to the core.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

Inputs = dict[str, Any]
"""What a scenario is given: CPU tensors and plain numbers, drawn by the grader."""

Observation = dict[str, Any]
"""What a scenario records: tensors, floats, ints, bools and strings, nothing else."""

FLOAT_DTYPES = (torch.float32, torch.float64)

# PyTorch's wording, as it reads in 2.x releases old and new.
INPLACE_ERROR = re.compile(
    r"one of the variables needed for gradient computation has been modified by an inplace operation"
)
LEAF_INPLACE_ERROR = re.compile(
    r"a (view of a )?leaf Variable that requires grad (is being|has been) used in an in-place operation"
)


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
            return f"`{self.name}` should be a class, but it is a {type(obj).__name__}."
        if self.kind == "function" and (isinstance(obj, type) or not callable(obj)):
            return f"`{self.name}` should be a function, but it is a {type(obj).__name__}."
        target = obj.__init__ if isinstance(obj, type) else obj
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return None  # builtins and C functions: let the call itself decide
        names = [p for p in signature.parameters if p != "self"]
        args = [object()] * len(self.params)
        try:
            signature.bind(*([None] if isinstance(obj, type) else []), *args)
        except TypeError:
            want = ", ".join(self.params)
            have = ", ".join(names)
            return f"`{self.name}` should accept ({want}), but its signature is ({have})."
        return None


@dataclass(frozen=True)
class Scenario:
    """One situation the student's code is put in.

    `draw(generator)` runs in the grader and returns the inputs; `run(namespace, inputs, device, obs)`
    runs wherever the code under test runs (a worker for a submission, the grader for the reference)
    and writes what it sees into `obs` as it goes, so that a failure late in a scenario keeps what was
    observed before it.
    """

    name: str
    draw: Callable[[torch.Generator, torch.dtype], Inputs]
    run: Callable[[Mapping[str, Any], Inputs, torch.device, Observation], None]
    dtypes: tuple[torch.dtype, ...] = FLOAT_DTYPES
    public: bool = False


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str = ""


PASS = Verdict(True)


@dataclass(frozen=True)
class Check:
    """A named, scored property. `evaluate(evidence)` is pure: tensors in, a verdict out."""

    name: str
    points: float
    description: str
    evaluate: Callable[[Any], Verdict]
    public: bool = False


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
    summary: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

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
