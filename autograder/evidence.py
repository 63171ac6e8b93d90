"""The evidence a check judges: the student's observations beside the reference's, trial by trial."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .outcome import Outcome, Trial
from .spec import Exercise, Inputs


class GraderError(Exception):
    """A fault of the grader or of an exercise spec: never a student's zero."""


@dataclass(frozen=True)
class Pair:
    trial: Trial
    got: Outcome
    want: Outcome
    inputs: Inputs

    @property
    def label(self) -> str:
        return f"scenario '{self.trial.scenario}', {self.trial.dtype} on {self.trial.device}"


@dataclass(frozen=True)
class Evidence:
    exercise: Exercise
    trials: tuple[Trial, ...]
    inputs: dict[str, Inputs]  # by "scenario/dtype"
    student: dict[str, Outcome]  # by trial key
    reference: dict[str, Outcome]  # by "scenario/dtype/cpu"

    def pairs(self, scenarios: tuple[str, ...] | None = None, dtypes: tuple[str, ...] | None = None) -> Iterator[Pair]:
        """Each trial of the given scenarios with the CPU reference of the same scenario and dtype."""
        for trial in self.trials:
            if scenarios is not None and trial.scenario not in scenarios:
                continue
            if dtypes is not None and trial.dtype not in dtypes:
                continue
            cpu_key = f"{trial.scenario}/{trial.dtype}/cpu"
            want = self.reference.get(cpu_key)
            if want is None:
                raise GraderError(f"no reference for {cpu_key}")
            if want.error is not None:
                raise GraderError(f"the reference failed on {cpu_key}: {want.error.type}: {want.error.message}")
            got = self.student.get(trial.key) or Outcome()
            yield Pair(trial, got, want, self.inputs[f"{trial.scenario}/{trial.dtype}"])

    def ran(self, scenarios: tuple[str, ...]) -> bool:
        return any(t.scenario in scenarios for t in self.trials)


def value(pair: Pair, key: str) -> Any:
    return pair.got.values.get(key)
