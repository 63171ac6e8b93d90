"""`check("residual_add")` inside a notebook: the public checks, on the names the notebook defined.

It runs in the student's own kernel on public inputs only; its result never enters a grade. It needs
no reference implementation (those are not installed with the package): the public inputs and the
reference's outcomes on them ship with the package (public.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from .call import Stop, stopping
from .exercises import get
from .harness import run_steps, trial_steps
from .pipeline import judge, prepare
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


TIME_LIMIT = 30.0
"""Seconds a self-check may run (every exercise's takes under a second here): an answer that loops is stopped."""


def check(exercise_id: str, namespace: Mapping[str, Any] | None = None, *, quiet: bool = False) -> Result | None:
    """Runs the exercise's public checks on the names defined in the notebook and prints feedback. Ctrl-C, or
    TIME_LIMIT, stops it with a line that says so (no traceback) and no result: None."""
    exercise = get(exercise_id)
    ns = _notebook_namespace() if namespace is None else namespace
    prepared = prepare(exercise, public_only=True)
    workshop.before_check(exercise_id)  # only if joined: a kernel that dies in this check is reported when it rejoins
    try:
        with stopping(TIME_LIMIT):
            report = run_steps(trial_steps(exercise, ns, prepared.trials, (), prepared.inputs, filename="<notebook>",
                                           culprit_frames=None))
    except Stop as stop:
        print(f"Self-check stopped ({stop}): no result.")
        workshop.after_stop(exercise_id, stop)  # only if joined: a time limit is reported as "timed out"
        return None
    result = judge(exercise, prepared, report, submission="notebook")
    if not quiet:
        print(feedback_text(result))
        print("(Self-check: public checks only. The grader runs every check, also on inputs you do not see.)")
    workshop.after_check(result, report)  # only if joined; queued for a background thread, never raises
    return result


check.join, check.preview, check.leave = workshop.join, workshop.preview, workshop.leave
check.stuck, check.done = workshop.stuck, workshop.done
