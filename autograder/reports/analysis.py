"""What a class's results say, beyond each one: a submission's root cause (the error several checks met, said
once), tampering, who needs attention and why, the checks failed most often. Pure functions of Results."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.evidence import label as trial_label
from ..core.outcome import Trial
from ..core.result import Result, TestResult
from ..core.status import Status
from ..exercises import EXERCISES
from ..feedback.wording import Said, say
from .gradebook import (
    Gradebook,
    Row,
)
from .graded import Graded

RAN = (Status.FAILED, Status.PASSED)
"""A submission whose checks ran: which of them failed says something."""


@dataclass
class Feedback:
    summary: str
    cause: list[str] = field(default_factory=list)
    cause_checks: int = 0
    cause_lines: list[int] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)


def root_cause(result: Result) -> Feedback:
    """The submission's feedback with the errors that several failed checks met (Result.causes) taken out, to
    be shown once, at the top; each of those checks then says only in a few words where it met one."""
    failed = [t for t in result.tests if t.status == Status.FAILED]
    met = Counter(t.cause for t in failed if t.cause is not None)
    shared = [i for i in sorted(met) if met[i] >= 2]
    tests = []
    for t in result.tests:
        same = t.status == Status.FAILED and t.cause in shared
        where = trial_label(Trial.from_key(t.trial)) if t.trial else ""
        tests.append({"output": "" if same else t.output, "same_cause": same,
                      "contexts": [" — ".join(x for x in (t.brief.rstrip("."), where) if x)] if same else [],
                      "lines": list(result.causes[t.cause].lines) if t.cause is not None and not same else []})
    summary = result.output
    for i in shared:
        summary = summary.replace(result.causes[i].text, "")
    lines = [n for i in shared for n in result.causes[i].lines]
    return Feedback(summary.strip(), [result.causes[i].text for i in shared], sum(met[i] for i in shared),
                    list(dict.fromkeys(lines)), tests)


def tampering(result: Result) -> bool:
    """Whether the grader flagged the submission for tampering: it changed the grader or torch, or forged the
    worker's report (result.Cause.tampered)."""
    return result.tampered


def failing_counts(graded: list[Graded]) -> list[tuple[str, int]]:
    """(exercise: check, submissions failing it), most common first. Only submissions that ran and failed
    some checks count: an untouched or unreadable file fails every check and says nothing about which."""
    counts = Counter(f"{g.exercise}: {t.name}" for g in graded if g.status == Status.FAILED
                     for t in g.result.tests if t.status == Status.FAILED)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# The exercise of a result whose exercise the batch could not decide (`hw3.py`, a notebook without metadata, a
# stray `scratch.py`): batch.py grades it as malformed under this name. The report lists it under "needs
# attention" with the reason, and nowhere else: not an exercise, not a column, not on a student's page.
UNDECIDED = "unknown"

# How a gated check's output begins (checks.gated): the check was not counted because the answer does not yet
# do what the exercise is about. It says nothing about that check itself: not counted as failed here.
GATED = "Not counted yet: "


def undecided(graded: list[Graded]) -> tuple[list[Graded], list[Graded]]:
    """The results of a decided exercise, and those the batch could not tell the exercise of (UNDECIDED)."""
    return [g for g in graded if g.exercise != UNDECIDED], [g for g in graded if g.exercise == UNDECIDED]


def _gated(t: TestResult) -> bool:
    return t.status == Status.FAILED and (t.output.startswith(GATED) or t.brief.startswith(GATED))


def _failed_checks(g: Graded) -> set[str]:
    """The checks that ran and failed: a gated check (not counted yet) did not run as itself."""
    return {t.name for t in g.result.tests if t.status == Status.FAILED and not _gated(t)}


def _checks(g: Graded) -> set[str]:
    """The checks that ran: every check but the gated ones."""
    return {t.name for t in g.result.tests if not _gated(t)}


def exercise_list(exercises: list[str], book: Gradebook) -> str:
    if len(exercises) == len(book.exercises) and len(exercises) > 1:
        return "all"
    return ", ".join(f"#{EXERCISES[e].number}" if e in EXERCISES else e for e in exercises)


ATTENTION = {  # key -> the message ids of its label and of why it needs attention
    "tampering": ("reports: attention tampering", "reports: attention tampering why"),
    Status.CRASHED: ("reports: attention crashed", "reports: attention crashed why"),
    Status.TIMED_OUT: ("reports: attention timed out", "reports: attention timed out why"),
    Status.MALFORMED: ("reports: attention malformed", "reports: attention malformed why"),
    Status.NOT_ATTEMPTED: ("reports: attention not attempted", "reports: attention not attempted why"),
    "same_check": ("reports: attention same check", "reports: attention same check why"),
}


def attention_reasons() -> list[tuple[str, str, str]]:
    """(key, label, why) for each reason a submission needs attention, in the language chosen now."""
    return [(key, say(label), say(why)) for key, (label, why) in ATTENTION.items()]


ATTENTION_LABELS = Said({key: label for key, (label, _) in ATTENTION.items()})


def student_attention(row: Row, book: Gradebook) -> dict[str, str]:
    """Why a student needs attention: reason key -> the exercises or checks concerned."""
    found: dict[str, list[str]] = {}
    for e in book.exercises:
        cell = row.cell(e)
        if any(tampering(g.result) for g in cell.submissions):
            found.setdefault("tampering", []).append(e)
        if cell.status in (Status.CRASHED, Status.TIMED_OUT, Status.MALFORMED, Status.NOT_ATTEMPTED):
            found.setdefault(cell.status, []).append(e)
    reasons = {k: exercise_list(v, book) for k, v in found.items()}
    ran = [c.counted for c in row.cells.values() if c.counted and c.status in RAN]
    names = set().union(*(_checks(g) for g in ran)) if ran else set()
    everywhere = []
    for name in sorted(names):
        having = [g for g in ran if name in _checks(g)]
        if len(having) >= 2 and all(name in _failed_checks(g) for g in having):
            everywhere.append(f"“{name}” in {len(having)}")
    if everywhere:
        reasons["same_check"] = ", ".join(everywhere)
    return reasons


def failed_by_all(graded: list[Graded], at_least: int = 3) -> list[str]:
    """`exercise: check` for checks that every submission that ran (at least `at_least`) failed."""
    found = []
    by_exercise: dict[str, list[Graded]] = {}
    for g in graded:
        if g.status in RAN:
            by_exercise.setdefault(g.exercise, []).append(g)
    for e, ran in sorted(by_exercise.items()):
        if len(ran) >= at_least:
            found += [f"{e}: {name}" for name in sorted(set.intersection(*(_failed_checks(g) for g in ran)))]
    return found


