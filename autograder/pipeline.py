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

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from . import trials as trial_plan
from .core.grade import grade
from .core.outcome import Outcome, RunReport, Trial
from .core.result import Result
from .core.spec import Exercise, Inputs
from .exercises import get
from .feedback.describe import Explainer, LineFix, Suggester
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


Regrade = Callable[[str], Result]
"""Grades another code text of the same answer with the same exercise, trials and runner (verify below)."""


def applied(code: str, fix: LineFix) -> str | None:
    """`code` with a suggested rewrite put in place of the lines it names (compared without comments), each new
    line indented as the first old one; None where those lines are not the suggestion's `before`."""
    from .blame.suggest.suggest import without_comment

    if fix.before is None or fix.after is None:
        return None
    # lines as Python counts them: str.splitlines would also split on \x0c, \x85, \u2028..., which Python does not
    lines, old = re.split(r"\r\n|\r|\n", code.rstrip("\r\n")), fix.before.split("\n")
    start = fix.line - 1
    if not 0 <= start <= len(lines) - len(old) or any(
            (without_comment(line.strip()) or "") != want.strip() for line, want in zip(lines[start:], old)):
        return None
    first = lines[start]
    indent = first[: len(first) - len(first.lstrip())]
    return "\n".join(lines[:start] + [indent + line.strip() for line in fix.after.splitlines()]
                     + lines[start + len(old):]) + "\n"


def passes(result: Result) -> bool:
    """Every check passed: the whole score, and no check failed."""
    return result.score >= result.max_score and all(t.status.value == "passed" for t in result.tests)


def verified(suggest: Suggester, code: str, regrade: Regrade) -> Suggester:
    """`suggest`, except that a rewrite is proposed only where the answer, with it applied, passes every check
    of the exercise's public trials (graded by `regrade`): the rule `blame --fix` follows, never advise a fix
    that does not work. Words alone cannot be applied, and pass as they are. One rewrite at most is graded per
    answer (a second one is not proposed): an answer that scatters its writes cannot make its grading cost more
    than one more run."""
    seen: dict[str, bool] = {}

    def checked(report: dict) -> LineFix | None:
        fix = suggest(report)
        if fix is None or fix.after is None or fix.before is None:
            return fix
        fixed = applied(code, fix)
        if fixed is None or (fixed not in seen and seen):
            return None
        if fixed not in seen:
            seen[fixed] = passes(regrade(fixed))
        return fix if seen[fixed] else None

    return checked


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
          answer: str | None = None, regrade: Regrade | None = None) -> Result:
    """The Result of a run. `answer`: the graded code. `regrade`: how to grade another text of it, so that a
    rewrite the feedback proposes is first applied and graded (verified); without it none is proposed."""
    explain = prepared.explainer or explainer(exercise)
    if explain.suggest is not None and explain.rewrites and explain.shows_fixes:
        explain = replace(explain, suggest=verified(explain.suggest, answer, regrade) if answer and regrade else
                          _words_only(explain.suggest), _memo={})
    return grade(exercise, report, prepared.reference, prepared.trials, prepared.inputs,
                 public_only=prepared.public_only, submission=submission, answer=answer, explainer=explain)


def _words_only(suggest: Suggester) -> Suggester:
    """Where no grading can verify a rewrite: the suggestion's words, never its rewrite."""
    def words(report: dict) -> LineFix | None:
        fix = suggest(report)
        return None if fix is None or fix.after is not None else fix
    return words


def public_part(prepared: Prepared) -> Prepared:
    """`prepared` with its public trials alone, judged as a self-check is: what a rewrite is verified on, so that
    whether a fix is shown never depends on a hidden input (an answer could otherwise make the fixed code pass
    or fail by the hidden values and read one bit of them in its feedback)."""
    trials = tuple(t for t in prepared.trials if t.public)
    scenarios = {t.scenario for t in trials}
    return Prepared(trials, {k: v for k, v in prepared.inputs.items() if k not in prepared.hidden}, frozenset(),
                    {k: v for k, v in prepared.reference.items() if k.split("/")[0] in scenarios},
                    public_only=True, explainer=prepared.explainer)


def regrader(exercise: Exercise, prepared: Prepared, runner: Runner, timeout: float) -> Regrade:
    """Grades another text of an answer on the public trials of `prepared` (public_part), with the same runner,
    for verified."""
    public = public_part(prepared)
    return lambda code: judge(exercise, public, run(exercise, code, public, runner, timeout), answer=code)


def grade_code(exercise_id: str, code: str, *, devices: tuple[str, ...] = ("cpu",),
               salt: str = DEFAULT_SALT, public_only: bool = False, runner: Runner | None = None,
               timeout: float = 60.0, submission: str = "") -> Result:
    """The whole grading of one answer, in process unless a runner is given (`autograder check`)."""
    exercise = get(exercise_id)
    prepared = prepare(exercise, devices, salt=salt, public_only=public_only)
    runner = runner or InProcessRunner()
    report = run(exercise, code, prepared, runner, timeout)
    return judge(exercise, prepared, report, submission=submission, answer=code,
                 regrade=regrader(exercise, prepared, runner, timeout))
