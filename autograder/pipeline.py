"""The one grading path: prepare (trials, inputs, reference outcomes), run the answer (via a runner),
judge. The batch (batch.py), `autograder check` (grade_code) and the tests take all three; the notebook's
self-check (selfcheck.py), which has a notebook's names rather than code, runs its steps itself:

    prepare(exercise, devices, salt, public_only) -> Prepared    once per exercise and batch (batch.Preparations)
    run(exercise, code, prepared, runner)          -> RunReport   the answer, in a worker (or in process)
    judge(exercise, prepared, report)              -> Result      grade.py, the pure core

Public trials come first and their inputs are always the shipped ones (public.py), the same everywhere;
the hidden ones are drawn from the salt (trials.draw_hidden). A public-only grading (a self-check) judges
against the reference's outcomes shipped with the package, so it works where the references are not
installed; any other runs the reference here, on every input, and never uses the shipped outcomes, so
public data that drifted from the reference cannot hide a difference.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import trials as trial_plan
from .core.grade import grade
from .core.outcome import Outcome, RunReport, Trial
from .core.result import Result
from .core.spec import Exercise, Inputs
from .exercises import get
from .feedback.describe import Explainer, LineFix
from .public import load_public
from .reference_store import run_reference
from .runner import InProcessRunner, Job, Runner
from .settings import DEFAULT_SALT


def suggested_rewrite(report: dict) -> LineFix | None:
    """The culprit locator's suggested rewrite (blame/suggest/suggest.py), as feedback shows it: the core gets it as an
    Explainer's `suggest` (explainer below) and never imports the locator or libcst itself."""
    from .blame.suggest.suggest import (  # libcst: only when an in-place error is explained
        suggest_from_line,
        without_comment,
    )

    found = suggest_from_line(report)
    if found is None or found.line is None:
        return None

    def shown(part: str | None) -> str | None:
        return None if part is None else "\n".join(without_comment(line.strip()) or "" for line in part.splitlines())

    return LineFix(found.line, shown(found.before), shown(found.after), found.why)


def explainer(exercise: Exercise, fixes: bool | None = None) -> Explainer:
    """How a grading of `exercise` puts errors in words: with the locator's suggested rewrite of the culprit line,
    unless the exercise rules rewrites out (spec.Exercise.rewrites) or the class is graded without fixes
    (`fixes` False: the diagnosis stays, no fix is proposed; None: describe.SHOW_FIXES). One per Prepared: a
    batch's submissions share its memo (classmates meet the same errors), and nothing outside the batch sees it."""
    return Explainer(exercise.rewrites, suggested_rewrite, fixes)


@dataclass(frozen=True)
class Prepared:
    """What every grading of an exercise under the same settings shares."""

    trials: tuple[Trial, ...]
    """Public ones first: what the answer does on them cannot depend on a hidden input it met before."""
    inputs: dict[str, Inputs]
    """By "scenario/dtype": one set serves every device."""
    hidden: frozenset[str]
    """The keys of `inputs` drawn from the salt, which a worker gets only once the public trials have run."""
    reference: dict[str, Outcome]
    """The reference's outcomes, by CPU trial key."""
    public_only: bool
    explainer: Explainer | None = None
    """How this grading's errors are put in words (explainer above); None: a fresh one per judge."""


def prepare(exercise: Exercise, devices: tuple[str, ...] = ("cpu",), *, salt: str = DEFAULT_SALT,
            public_only: bool = False, fixes: bool | None = None) -> Prepared:
    """The trials, inputs and reference outcomes of a grading of `exercise` (a public-only one ignores the
    salt); `fixes`: whether its feedback may propose a literal fix (None: describe.SHOW_FIXES). Needs the references
    unless public-only (ReferencesMissing)."""
    trials = trial_plan.plan(exercise, devices, public_only)
    _, inputs, shipped = load_public(exercise)
    if public_only:
        return Prepared(trials, inputs, frozenset(), shipped, public_only=True,
                        explainer=explainer(exercise, fixes))
    hidden = trial_plan.draw_hidden(exercise, trials, salt)
    inputs = {**inputs, **hidden}
    return Prepared(trials, inputs, frozenset(hidden), run_reference(exercise, trials, inputs), public_only=False,
                    explainer=explainer(exercise, fixes))


def run(exercise: Exercise, code: str, prepared: Prepared, runner: Runner, timeout: float = 60.0) -> RunReport:
    """The answer on every trial, by `runner`: a WarmPool for submissions, InProcessRunner for trusted code."""
    return runner.run(Job(exercise.id, code, prepared.trials, prepared.inputs, timeout, hidden=prepared.hidden))


def judge(exercise: Exercise, prepared: Prepared, report: RunReport, *, submission: str = "",
          answer: str | None = None) -> Result:
    """The Result of a run. `answer`: the graded code, where a hidden error's line is read from."""
    return grade(exercise, report, prepared.reference, prepared.trials, prepared.inputs,
                 public_only=prepared.public_only, submission=submission, answer=answer,
                 explainer=prepared.explainer or explainer(exercise))


def grade_code(exercise_id: str, code: str, *, devices: tuple[str, ...] = ("cpu",),
               salt: str = DEFAULT_SALT, public_only: bool = False, runner: Runner | None = None,
               timeout: float = 60.0, submission: str = "") -> Result:
    """The whole grading of one answer, in process unless a runner is given (`autograder check`)."""
    exercise = get(exercise_id)
    prepared = prepare(exercise, devices, salt=salt, public_only=public_only)
    report = run(exercise, code, prepared, runner or InProcessRunner(), timeout)
    return judge(exercise, prepared, report, submission=submission, answer=code)
