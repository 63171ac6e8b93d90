"""The grader's core: (exercise, what the code under test did, the reference) -> Result. No I/O.

Hidden means hidden. A check's own message is shown only when it was found on the public trials alone
(inputs anyone can see, the same in every batch); a check that fails only once hidden trials join says so
in words that cannot depend on the hidden inputs: the check's `Failed.hidden` text, the trial (scenario,
dtype, device), and for an error its type, the kind of PyTorch error it is, and the line of the answer
that raised, with that line's text taken from the answer itself. Never a message, a value, a shape or
printed text from a hidden trial. This relies on a check failing when any one trial fails (every check
here does): adding trials never turns a failure into a pass.
"""

from __future__ import annotations

import builtins
import functools
import re

from .checks import explained
from .evidence import Evidence, Failed, GraderError, label
from .feedback import explain
from .harness import ANSWER_FILE  # the answer's frames: the only ones a hidden message may name
from .outcome import ErrorInfo, Outcome, RunReport, Trial
from .result import Result, Status, TestResult
from .spec import INPLACE_ERROR, LEAF_INPLACE_ERROR, Check, Exercise, Inputs, Verdict

_RUN_FAILURES = {
    Status.TIMED_OUT: "Your code did not finish within the time limit",
    Status.CRASHED: "Your code crashed the process that ran it",
    Status.MALFORMED: "The submission could not be read",
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
    answer: str | None = None,
) -> Result:
    """Scores every check of the exercise (public checks only for a self-check). `answer`, the graded code,
    is where a hidden error's line text is read from (else from the worker's report)."""
    checks = exercise.checks_for(public_only)
    devices = tuple(dict.fromkeys(t.device for t in trials))
    blocked = _blocking_problem(report)
    judge = _Judge(exercise, report, reference, trials, inputs, answer)
    tests = []
    for check in checks:
        verdict = Verdict(False, blocked) if blocked is not None else judge(check)
        tests.append(
            TestResult(
                name=check.name,
                score=check.points if verdict.passed else 0.0,
                max_score=check.points,
                status=Status.PASSED if verdict.passed else Status.FAILED,
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


class _Judge:
    """Evaluates a check on all trials and, when it fails, finds whether the public trials alone fail it."""

    def __init__(self, exercise: Exercise, report: RunReport, reference: dict[str, Outcome],
                 trials: tuple[Trial, ...], inputs: dict[str, Inputs], answer: str | None):
        self.exercise, self.report, self.reference, self.inputs, self.answer = exercise, report, reference, inputs, answer
        self.public = tuple(t for t in trials if exercise.scenario(t.scenario).public)
        self.hidden = tuple(t for t in trials if not exercise.scenario(t.scenario).public)

    def _on(self, check: Check, trials: tuple[Trial, ...]) -> Verdict:
        """The check's verdict on these trials; a check that trips over odd student output fails."""
        try:
            return check.rule(Evidence(self.exercise, trials, self.inputs, self.report.outcomes, self.reference))
        except GraderError:
            raise
        except Exception as e:  # the student's output's fault; said in full only for public trials (below)
            return Verdict(False, f"Could not check this: {type(e).__name__}: {e}")

    def _quietly(self, check: Check, trials: tuple[Trial, ...]) -> Verdict | None:
        """The verdict on some of the trials; None where the check sees none of its scenarios among them."""
        try:
            return self._on(check, trials)
        except GraderError:
            return None

    def __call__(self, check: Check) -> Verdict:
        verdict = self._on(check, self.public + self.hidden)
        if verdict.passed or not self.hidden:
            return verdict
        public = self._quietly(check, self.public)
        if public is not None and not public.passed:
            return public  # found on public inputs alone: safe to say in full
        # The first hidden trial that makes it fail, by bisection: failing only grows as trials join.
        lo, hi, found = 1, len(self.hidden), {len(self.hidden): verdict}
        while lo < hi:
            mid = (lo + hi) // 2
            seen = self._quietly(check, self.public + self.hidden[:mid])
            if seen is not None and not seen.passed:
                hi, found[mid] = mid, seen
            else:
                lo = mid + 1
        return Verdict(False, self._hidden_message(found[lo], self.hidden[lo - 1]))

    def _hidden_message(self, verdict: Verdict, trial: Trial) -> str:
        what = verdict.hidden if isinstance(verdict, Failed) and verdict.hidden else "This check failed"
        if verdict.message.startswith("Could not check this:"):
            what = "This check could not judge what your code produced"
        text = f"{what.rstrip('.')} (on hidden inputs: {label(trial)})."
        outcome = self.report.outcomes.get(trial.key)
        if outcome is not None and outcome.error is not None:
            text += "\n" + explained(redacted(outcome.error, self.answer))
        return text


# --- an error raised on hidden inputs, as a student may read it -------------------------------------------

_REST_NOT_SHOWN = "(the rest of its message is not shown: it may describe the hidden inputs)"
_NOT_SHOWN = "its message is not shown, as it may describe the hidden inputs"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def redacted(error: ErrorInfo, answer: str | None) -> ErrorInfo:
    """The error as it may be shown for a hidden trial: its type (a name from Python, torch or the answer),
    the PyTorch error it is (the fixed words of INPLACE_ERROR or LEAF_INPLACE_ERROR) and no other part of
    its message, the line of the answer with that line's text, and the culprit locator's sites likewise."""
    if error.type == "TamperError":
        return error  # written by the harness from torch's own attribute names: nothing of the inputs
    lines = answer.splitlines() if answer is not None else None
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", answer)) if answer is not None else set()
    kind = INPLACE_ERROR.search(error.message) or LEAF_INPLACE_ERROR.search(error.message)
    message = f"{kind.group(0)} {_REST_NOT_SHOWN}" if kind else _NOT_SHOWN
    type_name = error.type if _known(error.type, words, exception=True) else "an exception (of a class made at run time)"
    line, code = _line(error.line, error.code, lines)
    culprit = _culprit(error.culprit, lines, words) if kind and error.culprit else None
    return ErrorInfo(type_name, message, line, code, culprit)


def _line(line: object, code: str | None, lines: list[str] | None) -> tuple[int | None, str | None]:
    """A line number of the answer and its text, read from the answer itself where we have it."""
    if not isinstance(line, int) or isinstance(line, bool):
        return None, None
    if lines is None:
        return line, code
    if 1 <= line <= len(lines):
        return line, lines[line - 1].strip()  # quoted in words: its indentation means nothing there
    return None, None


def _culprit(report: object, lines: list[str] | None, words: set[str]) -> dict | None:
    """The locator's report, keeping only its sites in the answer (op names known, code from the answer);
    None if its culprit cannot be shown that way."""
    if not isinstance(report, dict):
        return None

    def frame(s: object) -> dict | None:
        if not isinstance(s, dict) or s.get("file") != ANSWER_FILE:
            return None
        line, code = _line(s.get("line"), s.get("code") if isinstance(s.get("code"), str) else None, lines)
        if line is None:
            return None
        function = s.get("function") if _known(s.get("function"), words) else None
        return {"file": ANSWER_FILE, "line": line, "function": function, "code": code}

    def site(s: object) -> dict | None:
        where = frame(s)
        if where is None or not _known(s.get("op"), words):  # type: ignore[union-attr]
            return None
        links = s.get("chain") if isinstance(s.get("chain"), list) else []  # type: ignore[union-attr]
        chain = [f for f in map(frame, links) if f is not None]
        return {"op": s["op"], **where, "chain": chain}  # type: ignore[index]

    culprit = site(report.get("culprit"))
    if culprit is None:
        return None
    found: dict = {"culprit": culprit}
    saved = site(report.get("saved_by"))
    if saved is not None:
        found["saved_by"] = saved
    mods = report.get("modifications") if isinstance(report.get("modifications"), list) else []
    found["modifications"] = [m for m in (site(m) for m in mods) if m is not None]
    return found


def _known(name: object, words: set[str], exception: bool = False) -> bool:
    """A name the student may read for a hidden trial: one Python or torch defines, or one written in the
    answer. A name made at run time (a class or function named after the inputs) is not."""
    if not isinstance(name, str) or len(name) > 120 or not _NAME.fullmatch(name):
        return False
    if exception:
        return name in _exception_names() or name in words
    return name.startswith("torch.") or all(part in words or part in _python_names() for part in name.split("."))


@functools.cache
def _exception_names() -> frozenset[str]:
    """The exception classes of Python and torch, as this (the grader's) process knows them."""
    found, todo = set(), [BaseException]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in ("builtins", "torch") and sub.__name__ not in found:
                found.add(sub.__name__)
                todo.append(sub)
    return frozenset(found | {"BaseException", "SystemExit"})


@functools.cache
def _python_names() -> frozenset[str]:
    return frozenset(dir(builtins))


# --- the whole run --------------------------------------------------------------------------------------


def _blocking_problem(report: RunReport) -> str | None:
    """A problem that stops every check before it starts, in words the student can act on."""
    if report.status is not None:
        return f"{_RUN_FAILURES[report.status]}: {report.detail}"
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
    head = f"{score:g}/{max_score:g} points."
    if status == Status.NOT_ATTEMPTED:
        return head + " Not attempted yet: replace the TODO in the answer cells with your fix."
    if blocked:
        return f"{head} {blocked}"
    if status == Status.PASSED:
        return head + " Every check passed."
    return head + " See the failed checks below for what to fix."
