"""The grader's core: (exercise, what the code under test did, the reference) -> Result. No I/O."""

from __future__ import annotations

from .evidence import Evidence, GraderError
from .feedback import explain
from .outcome import Outcome, RunReport, Trial
from .result import Result, TestResult
from .spec import Exercise, Inputs, Verdict

_RUN_FAILURES = {
    "timed_out": "Your code did not finish within the time limit",
    "crashed": "Your code crashed the process that ran it",
    "malformed": "The submission could not be read",
}


def grade(
    exercise: Exercise,
    report: RunReport,
    reference: dict[str, Outcome],
    trials: tuple[Trial, ...],
    inputs: dict[str, Inputs],
    *,
    public_only: bool = False,
    submission: str = "",
) -> Result:
    """Scores every check of the exercise (public checks only for a self-check)."""
    checks = exercise.checks_for(public_only)
    devices = tuple(dict.fromkeys(t.device for t in trials))
    blocked = _blocking_problem(report)
    tests = []
    for check in checks:
        if blocked is not None:
            verdict = Verdict(False, blocked)
        else:
            evidence = Evidence(exercise, trials, inputs, report.outcomes, reference)
            try:
                verdict = check.evaluate(evidence)
            except GraderError:
                raise
            except Exception as e:  # a check that trips over odd student output is that output's fault
                verdict = Verdict(False, f"Could not check this: {type(e).__name__}: {e}")
        tests.append(
            TestResult(
                name=check.name,
                score=check.points if verdict.passed else 0.0,
                max_score=check.points,
                status="passed" if verdict.passed else "failed",
                output=verdict.message,
                visibility="visible" if check.public else "after_due_date",
                description=check.description,
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
        output=_summary(status, score, max_score, blocked),
        tests=tuple(tests),
        devices=devices,
        execution_time=report.seconds,
    )


def _blocking_problem(report: RunReport) -> str | None:
    """A problem that stops every check before it starts, in words the student can act on."""
    if report.status != "ok":
        return f"{_RUN_FAILURES.get(report.status, 'The run failed')}: {report.detail}"
    if report.load_error is not None:
        if report.load_error.type == "SyntaxError":
            return (
                f"Your answer has a syntax error at line {report.load_error.line}: "
                f"{report.load_error.message}" + (f" (`{report.load_error.code.strip()}`)" if report.load_error.code else "")
            )
        return "Your answer cells raised while being defined. " + explain(report.load_error)
    if report.problems:
        return " ".join(report.problems.values())
    return None


def _status(report: RunReport, score: float, max_score: float) -> str:
    if report.status != "ok":
        return report.status
    if report.load_error is not None and report.load_error.type == "SyntaxError":
        return "malformed"
    errors = [o.error for o in report.outcomes.values() if o.error is not None]
    if errors and all(e.not_attempted for e in errors) and score == 0:
        return "not_attempted"
    return "passed" if score == max_score else "failed"


def _summary(status: str, score: float, max_score: float, blocked: str | None) -> str:
    head = f"{score:g}/{max_score:g} points."
    if status == "not_attempted":
        return head + " Not attempted yet: replace the TODO in the answer cells with your fix."
    if blocked:
        return f"{head} {blocked}"
    if status == "passed":
        return head + " Every check passed."
    return head + " See the failed checks below for what to fix."
