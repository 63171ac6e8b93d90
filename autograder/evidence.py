"""The evidence a check judges: the student's observations beside the reference's, trial by trial."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .outcome import Outcome, Trial
from .spec import Exercise, Inputs, Verdict


class GraderError(Exception):
    """A fault of the grader or of an exercise spec: never a student's zero."""


@dataclass(frozen=True)
class Failed(Verdict):
    """A failed verdict that also says what may be shown when the failure was found on hidden inputs.

    `hidden` is made of the exercise's own words and of observation names also seen on public inputs:
    never a value, a shape, a count or text that came from the code under test, so it reads the same
    whatever the hidden inputs were (grade.py shows it, with the trial and the error's kind and line).
    """

    hidden: str = ""


def failed(message: str, hidden: str) -> Failed:
    """A failure: `message` in full where it was found on public inputs, `hidden` where on hidden ones."""
    return Failed(False, message, hidden)


def label(trial: Trial) -> str:
    """How a message names a trial: its scenario (a name from the exercise), dtype and device."""
    return f"scenario '{trial.scenario}', {trial.dtype} on {trial.device}"


@dataclass(frozen=True)
class Pair:
    trial: Trial
    got: Outcome
    want: Outcome
    inputs: Inputs

    @property
    def label(self) -> str:
        return label(self.trial)


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
                # A grader_error's text reaches the student: a hidden scenario's message could name its inputs.
                said = want.error.message if self.exercise.scenario(trial.scenario).public else "message not shown"
                raise GraderError(f"the reference failed on {cpu_key}: {want.error.type} at line {want.error.line} "
                                  f"of the reference: {said}")
            got = self.student.get(trial.key) or Outcome()
            yield Pair(trial, got, want, self.inputs[f"{trial.scenario}/{trial.dtype}"])

    def ran(self, scenarios: tuple[str, ...]) -> bool:
        return any(t.scenario in scenarios for t in self.trials)

    def shown_name(self, key: str, prefix: str | None = None) -> str:
        """`key` quoted for a message about hidden inputs: as it is where the reference observes it on public
        inputs too (`grad conv1.weight`), else only its kind (`loss …`): the name of an observation made on
        hidden inputs alone may count something of them (the fifth chunk, the fourth parameter)."""
        if self.observed_publicly(key):
            return f"`{key}`"
        return f"`{(prefix or key.split(' ')[0]).strip()} …`"

    def observed_publicly(self, key: str) -> bool:
        """Whether the reference observes `key` on public inputs too: then its name tells nothing hidden."""
        return any(key in outcome.values for cpu_key, outcome in self.reference.items()
                   if self.exercise.scenario(cpu_key.split("/")[0]).public)


def value(pair: Pair, key: str) -> Any:
    return pair.got.values.get(key)
