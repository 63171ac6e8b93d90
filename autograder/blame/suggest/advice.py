"""The feedback's "how to fix it", held to the rule `--fix` follows: never advise a fix that does not work.

The grader and the notebook's `check()` build their advice from `suggest_from_line` (the culprit's and the
saver's lines alone). Here that advice is checked as `--fix` checks a rewrite: applied to the answer's code
and graded against the exercise's own checks (its reference, its scenarios). A rewrite the grade does not pass
in full is not proposed; advice in words cannot be applied, so it is returned marked as not verified.

This module imports no grading path (blame sits below pipeline.py in the layers): the caller passes how to
grade a code text. From the grading path (pipeline.py, grade.py), once an answer raised the in-place error:

    checked = checked_advice(answer_code, culprit_report,
                             lambda fixed: pipeline.judge(exercise, prepared,
                                                          pipeline.run(exercise, fixed, prepared, runner)))
    # None: propose nothing; checked.verified True: the rewrite, which passed every check once applied;
    # checked.verified None: the words, to be shown as not verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...core.result import Result
from ...core.status import Status
from .suggest import Suggestion, suggest_from_line

Grade = Callable[[str], Result]  # grades an answer's code with the exercise's checks: the caller's grading path


@dataclass(frozen=True)
class Checked:
    """Advice that may be shown: a rewrite the grade passed in full (`verified` True), or words (`verified` None:
    nothing could apply them)."""

    suggestion: Suggestion
    verified: bool | None


def applied(code: str, s: Suggestion) -> str | None:
    """The answer with a one-line rewrite applied at its line, indented as that line; None where the line is not
    the suggestion's `before` (the answer changed, or the rewrite spans lines the grader did not read)."""
    lines = code.splitlines()
    if s.line is None or s.before is None or s.after is None or "\n" in s.before or not 0 < s.line <= len(lines):
        return None
    old = lines[s.line - 1]
    if old.strip() != s.before.strip():
        return None
    indent = old[: len(old) - len(old.lstrip())]
    return "\n".join(lines[: s.line - 1] + [indent + line.strip() for line in s.after.splitlines()]
                     + lines[s.line:]) + "\n"


def passes(result: Result) -> bool:
    """Every check passed: the whole score, and no check failed."""
    return result.score >= result.max_score and all(t.status == Status.PASSED for t in result.tests)


def checked_advice(code: str, report: dict, grade: Grade) -> Checked | None:
    """The advice the feedback may show for this culprit report, or None: a rewrite that does not pass the
    exercise's checks once applied is never proposed (and neither are words that would say the same)."""
    s = suggest_from_line(report)
    if s is None:
        return None
    if s.after is None:
        return Checked(s, None)
    fixed = applied(code, s)
    if fixed is None or not passes(grade(fixed)):
        return None
    return Checked(s, True)
