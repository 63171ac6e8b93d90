"""`check("residual_add")` inside a notebook: the public checks, on the names the notebook defined.

It runs in the student's own kernel on public inputs only; its result never enters a grade. It needs
no reference implementation (those are not installed with the package): the public inputs and the
reference's outcomes on them ship with the package (public.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from .exercises import get
from .grade import grade
from .harness import run_trials, symbol_problems
from .outcome import RunReport
from .public import load_public
from .report import feedback_text
from .result import Result
from .workshop import client as workshop  # the opt-in live view of a workshop: check.join(URL)


def _notebook_namespace() -> Mapping[str, Any]:
    """The interactive namespace: IPython's user namespace, or __main__'s globals in a script."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            return shell.user_ns
    except ImportError:
        pass
    return vars(sys.modules["__main__"])


def check(exercise_id: str, namespace: Mapping[str, Any] | None = None, *, quiet: bool = False) -> Result:
    """Runs the exercise's public checks on the names defined in the notebook and prints feedback."""
    exercise = get(exercise_id)
    ns = _notebook_namespace() if namespace is None else namespace
    trials, inputs, expected = load_public(exercise)
    problems = symbol_problems(exercise, ns)
    report = RunReport(problems=problems) if problems else RunReport(
        outcomes=run_trials(exercise, ns, trials, inputs, filename="<notebook>", culprit_frames=None)
    )
    result = grade(exercise, report, expected, trials, inputs, public_only=True, submission="notebook")
    if not quiet:
        print(feedback_text(result))
        print("(Self-check: public checks only. The grader also checks gradients on hidden inputs.)")
    workshop.after_check(result, report)  # only if joined; queued for a background thread, never raises
    return result


check.join, check.preview, check.leave = workshop.join, workshop.preview, workshop.leave
