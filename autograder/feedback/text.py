"""A Result as a student reads it in a terminal or a notebook: what went wrong, said once, then one line per
check and, under each failed one, what it found.

An error that several checks met (a Result's Cause) is explained once, at the top; each check that met it then
says in a few words where (its `brief` and its trial). A check's full text (results.json's `output`, which
platforms show check by check) stays as it is.
"""

from __future__ import annotations

from ..core.outcome import Trial
from ..core.result import Result
from ..core.status import Status
from .wording import Said, exercise_text, say

INDENT = "        "
STATUS_NAMES = Said({Status.PASSED: "reports: status passed", Status.FAILED: "reports: status failed",
                     Status.NOT_ATTEMPTED: "reports: status not attempted",
                     Status.TIMED_OUT: "reports: status timed out", Status.CRASHED: "reports: status crashed",
                     Status.MALFORMED: "reports: status malformed",
                     Status.GRADER_ERROR: "reports: status grader error"})
"""A status as a teacher reads it (the command line's summary, the class report), in the language chosen then."""


def feedback_text(result: Result) -> str:
    """The feedback a student reads: the summary, each error once, then one line per check."""
    lines = [f"{result.exercise}: {result.output}"]
    failed = [t for t in result.tests if t.status == Status.FAILED]
    said = []
    for index, cause in enumerate(result.causes):
        met = [t.name for t in failed if t.cause == index]
        if not met or cause.text in result.output:  # the summary says it already (a run that sent no report)
            continue
        said.append(index)
        lines.append(say("what went wrong", checks=say("cli: list separator").join(exercise_text(n) for n in met)))
        lines += [INDENT + line for line in cause.text.splitlines()]
    for t in result.tests:
        mark = say("mark passed") if t.status == Status.PASSED else say("mark failed")
        hidden = "" if t.visibility == "visible" else say("mark hidden")
        lines.append(f"  [{mark}] {exercise_text(t.name)}: {t.score:g}/{t.max_score:g}{hidden}")
        if t.status != Status.FAILED:
            continue
        if t.cause is not None and result.causes[t.cause].text in result.output:
            continue  # the summary says why every check failed (a run that sent no report, a syntax error)
        if t.cause in said:
            lines.append(INDENT + say("met it", brief=(t.brief or t.name).rstrip("."), trial=_where(t.trial)))
        elif t.output:
            lines += [INDENT + line for line in t.output.splitlines()]
    return "\n".join(lines)


def footer() -> str:
    """What a self-check's feedback ends with: it ran the public checks only."""
    return say("self-check footer")


def _where(trial_key: str) -> str:
    """Where a check met the error, as a message names a trial (evidence.label)."""
    if not trial_key:
        return ""
    trial = Trial.from_key(trial_key)
    return say("trial where", trial=say("trial", scenario=trial.scenario, dtype=trial.dtype, device=trial.device))
