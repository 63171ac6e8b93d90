"""The evidence a check judges: the student's observations beside the reference's, trial by trial."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from ..feedback.wording import say
from .outcome import ErrorInfo, Outcome, Trial
from .spec import Exercise, Family, Inputs, Selector, Verdict, select

if TYPE_CHECKING:
    from ..feedback.describe import Explainer

T = TypeVar("T")


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
    trial: Trial | None = None
    """The trial it was found in, where the rule names one."""
    error: ErrorInfo | None = None
    """The error that made it fail, where one did (the message explains it): grade.py makes it a Cause."""


def failed(message: str, hidden: str, *, trial: Trial | None = None, error: ErrorInfo | None = None) -> Failed:
    """A failure: `message` in full where it was found on public inputs, `hidden` where on hidden ones; the
    trial it was found in and the error that made it fail, as facts (grade.py carries them into the Result)."""
    return Failed(False, message, hidden, trial, error)


def label(trial: Trial) -> str:
    """How a message names a trial: its scenario (a name from the exercise), dtype and device."""
    return say("trial", scenario=trial.scenario, dtype=trial.dtype, device=trial.device)


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
    """Every trial's outcome beside the CPU reference's; a check's Rule narrows it (`within`) to the scenarios
    and observations it declares (None: all)."""

    exercise: Exercise
    trials: tuple[Trial, ...]
    inputs: dict[str, Inputs]  # by "scenario/dtype"
    student: dict[str, Outcome]  # by trial key
    reference: dict[str, Outcome]  # by "scenario/dtype/cpu"
    scenarios: tuple[str, ...] | None = None
    reads: Selector | None = None
    explainer: Explainer | None = None
    """How this grading puts an error in words (grade.py passes its own; feedback/describe.py)."""

    def explain(self, error: ErrorInfo) -> str:
        """The error in words a student can act on, as this grading says them (with a suggested rewrite of the
        culprit line where the exercise allows one)."""
        if self.explainer is None:
            raise GraderError("this evidence was made without an explainer: it cannot put an error in words")
        return self.explainer(error)

    def within(self, scenarios: tuple[str, ...] | None, reads: Selector) -> Evidence:
        return replace(self, scenarios=scenarios, reads=reads)

    def pairs(self) -> list[Pair]:
        """Each trial in view with the CPU reference of the same scenario and dtype, both holding only the
        observations in view."""
        found = []
        for trial in self.trials:
            if self.scenarios is not None and trial.scenario not in self.scenarios:
                continue
            cpu_key = Trial(trial.scenario, trial.dtype, "cpu").key
            want = self.reference.get(cpu_key)
            if want is None:
                raise GraderError(f"no reference for {cpu_key}")
            if want.error is not None:
                # A grader_error's text reaches the student: a hidden scenario's message could name its inputs.
                said = want.error.message if trial.public else "message not shown"
                raise GraderError(f"the reference failed on {cpu_key}: {want.error.type} at line {want.error.line} "
                                  f"of the reference: {said}")
            got = self.student.get(trial.key) or Outcome()
            inputs = self.inputs[trial.input_key]
            found.append(Pair(trial, self._in_view(got), self._in_view(want), inputs))
        return self._some(found, "no trial ran")

    def observations(self) -> list[tuple[Pair, str]]:
        """Each trial in view with each observation in view that the reference made in it."""
        found = [(pair, key) for pair in self.pairs() for key in pair.want.values]
        return self._some(found, "the reference observed nothing the check reads")

    def _some(self, found: list[T], what: str) -> list[T]:
        """`found`, or a GraderError where it is empty: the one place that refuses a check that cannot fail."""
        if not found:
            where = "any scenario" if self.scenarios is None else f"scenarios {', '.join(self.scenarios)}"
            reads = ", ".join(map(str, self.reads or ())) or "no observation"
            raise GraderError(f"{what}, in {where}, reading {reads}: a check that cannot fail")
        return found

    def _in_view(self, outcome: Outcome) -> Outcome:
        if self.reads is None:
            return outcome
        return replace(outcome, values={k: outcome.values[k] for k in select(self.reads, outcome.values)})

    def shown_name(self, key: str) -> str:
        """`key` quoted for a message about hidden inputs: as it is where the reference observes it on public
        inputs too (`grad conv1.weight`), else only its family or first word (`loss …`): the name of an
        observation made on hidden inputs alone may count something of them (the fifth chunk, the fourth
        parameter)."""
        if self.observed_publicly(key):
            return f"`{key}`"
        family = next((f for f in self.reads or () if isinstance(f, Family) and f.member(key) is not None), None)
        return f"`{family.name if family else key.split(' ')[0]} …`"

    def observed_publicly(self, key: str) -> bool:
        """Whether the reference observes `key` on public inputs too: then its name tells nothing hidden."""
        public = {trial.scenario for trial in self.trials if trial.public}  # every public scenario's (trials.plan)
        return any(key in outcome.values for cpu_key, outcome in self.reference.items()
                   if Trial.from_key(cpu_key).scenario in public)
