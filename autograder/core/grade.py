"""The grader's core: (exercise, what the code under test did, the reference) -> Result. No I/O.

Hidden means hidden. A check's own message is shown only when it was found on the public trials alone
(inputs anyone can see, the same in every batch); a check that fails only once hidden trials join says so
in words that cannot depend on the hidden inputs: the check's `Failed.hidden` text, the trial (scenario,
dtype, device), and for an error what redact.py keeps of it. Never a message, a value, a shape or printed
text from a hidden trial. This relies on a check failing when any one trial fails (every check here does):
adding trials never turns a failure into a pass.

Facts travel as fields: each failed check's trial, and the error behind it as a Cause (its class, the answer's
lines it names, the culprit's op, tampering), said once per Result however many checks met it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..feedback import describe as feedback
from ..feedback.describe import Explainer
from ..feedback.redact import redacted
from ..feedback.wording import exercise_text, say
from .evidence import Evidence, Failed, GraderError, label
from .messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from .outcome import Outcome, RunReport, Trial
from .result import Cause, Result, TestResult
from .spec import Check, Exercise, Inputs, Verdict
from .status import RUN_FAILURES, Status


@dataclass(frozen=True)
class Judged:
    """A check's verdict with its facts: where it was found (`trial`), and the error behind it (`cause`)."""

    verdict: Verdict
    brief: str = ""
    trial: Trial | None = None
    cause: Cause | None = None


def grade(
    exercise: Exercise,
    report: RunReport,
    reference: dict[str, Outcome],
    trials: tuple[Trial, ...],
    inputs: dict[str, Inputs],
    *,
    public_only: bool = False,
    submission: str = "",
    answer: str | None = None,
    explainer: Explainer | None = None,
) -> Result:
    """Scores every check of the exercise (public checks only for a self-check). `answer`, the graded code,
    is no longer read: a hidden error names no line of it (redact.py). `explainer` puts errors
    in words (pipeline.judge passes one with the locator's suggestions); by default, the exercise's setting with
    no suggested rewrite."""
    explainer = explainer if explainer is not None else Explainer(exercise.rewrites)
    checks = exercise.checks_for(public_only)
    devices = tuple(dict.fromkeys(t.device for t in trials))
    blocked = _blocking_problem(report, explainer)
    judge = _Judge(exercise, report, reference, trials, inputs, answer, explainer)
    tests, causes = [], _Causes()
    for check in checks:
        judged = Judged(Verdict(False, blocked.text), cause=blocked) if blocked is not None else judge(check)
        passed = judged.verdict.passed
        tests.append(
            TestResult(
                name=check.name,
                score=check.points if passed else 0.0,
                max_score=check.points,
                status=Status.PASSED if passed else Status.FAILED,
                output=judged.verdict.message,
                visibility="visible" if check.public else "after_due_date",
                description=exercise_text(check.description),
                brief="" if passed else judged.brief,
                trial="" if passed or judged.trial is None else judged.trial.key,
                cause=None if passed else causes.index(judged.cause),
            )
        )
    score = sum(t.score for t in tests)
    max_score = sum(t.max_score for t in tests)
    status = _status(report, score, max_score)
    return Result(
        exercise=exercise.id,
        submission=submission,
        status=status,
        score=score,
        max_score=max_score,
        output=_summary(status, score, max_score, blocked.text if blocked is not None else None),
        tests=tuple(tests),
        devices=devices,
        execution_time=report.seconds,
        causes=causes.found,
    )


class _Causes:
    """The errors behind a result's failures, each once. Two checks met the same error when its class, the
    lines it names, the culprit's op and the kind of PyTorch error are the same (the tensor's shape in the
    message may differ from one scenario to the next)."""

    def __init__(self) -> None:
        self.found: tuple[Cause, ...] = ()
        self._keys: dict[tuple, int] = {}

    def index(self, cause: Cause | None) -> int | None:
        if cause is None:
            return None
        key = (cause.error, cause.lines, cause.op, cause.tampered, _kind(cause))
        if key not in self._keys:
            self._keys[key] = len(self.found)
            self.found = (*self.found, cause)
        return self._keys[key]


def _kind(cause: Cause) -> str:
    """Which of PyTorch's in-place errors the cause is, if one; else its words (a run that sent no report)."""
    for pattern in (INPLACE_ERROR, LEAF_INPLACE_ERROR):
        if pattern.search(cause.text):
            return pattern.pattern
    return cause.text if not cause.error else ""


class _Judge:
    """Evaluates a check on all trials and, when it fails, finds whether the public trials alone fail it."""

    def __init__(self, exercise: Exercise, report: RunReport, reference: dict[str, Outcome],
                 trials: tuple[Trial, ...], inputs: dict[str, Inputs], answer: str | None, explainer: Explainer):
        self.exercise, self.report, self.reference = exercise, report, reference
        self.inputs, self.answer, self.explainer = inputs, answer, explainer
        self.public = tuple(t for t in trials if t.public)
        self.hidden = tuple(t for t in trials if not t.public)

    def _on(self, check: Check, trials: tuple[Trial, ...]) -> Verdict:
        """The check's verdict on these trials; a check that trips over odd student output fails."""
        try:
            return check.rule(Evidence(self.exercise, trials, self.inputs, self.report.outcomes, self.reference,
                                       explainer=self.explainer))
        except GraderError:
            raise
        except Exception as e:  # the student's output's fault; said in full only for public trials (below)
            return Failed(False, say("could not check", type=type(e).__name__, message=e), say("hidden unjudged"))

    def _quietly(self, check: Check, trials: tuple[Trial, ...]) -> Verdict | None:
        """The verdict on some of the trials; None where the check sees none of its scenarios among them."""
        try:
            return self._on(check, trials)
        except GraderError:
            return None

    def __call__(self, check: Check) -> Judged:
        verdict = self._on(check, self.public + self.hidden)
        if verdict.passed or not self.hidden:
            return self._public(verdict)
        public = self._quietly(check, self.public)
        if public is not None and not public.passed:
            return self._public(public)  # found on public inputs alone: safe to say in full
        # The first hidden trial that makes it fail, by bisection: failing only grows as trials join.
        lo, hi, found = 1, len(self.hidden), {len(self.hidden): verdict}
        while lo < hi:
            mid = (lo + hi) // 2
            seen = self._quietly(check, self.public + self.hidden[:mid])
            if seen is not None and not seen.passed:
                hi, found[mid] = mid, seen
            else:
                lo = mid + 1
        return self._hidden(found[lo], self.hidden[lo - 1])

    def _hidden(self, verdict: Verdict, trial: Trial) -> Judged:
        """A failure found on a hidden trial: the check's hidden words, the trial, the error as redacted."""
        what = verdict.hidden if isinstance(verdict, Failed) and verdict.hidden else say("hidden failed")
        text = say("hidden", what=what.rstrip("."), trial=label(trial))
        outcome = self.report.outcomes.get(trial.key)
        cause = None
        if outcome is not None and outcome.error is not None:
            shown = redacted(outcome.error)
            words = self.explainer(shown)
            text += "\n" + words
            cause = feedback.cause(shown, words)
        return Judged(Verdict(False, text), what, trial, cause)

    def _public(self, verdict: Verdict) -> Judged:
        """A verdict found on public inputs (or a pass), with the facts its rule gave."""
        if not isinstance(verdict, Failed):
            return Judged(verdict)
        error = verdict.error
        cause = feedback.cause(error, self.explainer(error)) if error is not None else None
        return Judged(verdict, verdict.hidden, verdict.trial, cause)


# --- the whole run --------------------------------------------------------------------------------------


def _blocking_problem(report: RunReport, explainer: Explainer) -> Cause | None:
    """A problem that stops every check before it starts, in words the student can act on, with its facts."""
    if report.status is not None:
        return Cause(say(RUN_FAILURES[report.status], detail=report.detail), tampered=report.forged)
    error = report.load_error
    if error is not None:
        if error.type == "SyntaxError":
            code = say("syntax error code", code=error.code.strip()) if error.code else ""
            return feedback.cause(error, say("syntax error", line=error.line, message=error.message, code=code))
        return feedback.cause(error, say("raised while defined", explanation=explainer.describe(error)))
    if report.problems:
        return Cause(" ".join(report.problems.values()))
    return None


def _status(report: RunReport, score: float, max_score: float) -> Status:
    if report.status is not None:
        return report.status
    if report.load_error is not None and report.load_error.type == "SyntaxError":
        return Status.MALFORMED
    errors = [o.error for o in report.outcomes.values() if o.error is not None]
    if errors and all(e.not_attempted for e in errors) and score == 0:
        return Status.NOT_ATTEMPTED
    return Status.PASSED if score == max_score else Status.FAILED


def _summary(status: Status, score: float, max_score: float, blocked: str | None) -> str:
    head = say("points", score=score, max_score=max_score)
    if status == Status.NOT_ATTEMPTED:
        return say("summary not attempted", head=head)
    if blocked:
        return say("summary blocked", head=head, blocked=blocked)
    if status == Status.PASSED:
        return say("summary passed", head=head)
    return say("summary failed", head=head)
