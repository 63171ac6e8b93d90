"""`check("residual_add")` inside a notebook: the public checks, on the names the notebook defined.

It runs in the student's own kernel on public inputs only; its result never enters a grade. It needs
no reference implementation (those are not installed with the package): the public inputs and the
reference's outcomes on them ship with the package (public.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from .call import Stop, stopping
from .exercises import get
from .feedback_text import feedback_text
from .harness import run_steps, trial_steps
from .outcome import RunReport
from .pipeline import judge, prepare
from .result import Result

AFTER_CHECK: list[Callable[[Result, RunReport], None]] = []
"""Called after every check() with its result and run report, never letting an error out: the workshop's
client adds itself there (autograder/__init__.py installs it, with check.join, check.preview, check.leave)."""


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


def check(exercise_id: str, namespace: Mapping[str, Any] | None = None, *, quiet: bool = False) -> Result | None:
    """Runs the exercise's public checks on the names defined in the notebook and prints feedback. Ctrl-C
    stops it with a line that says so (no traceback) and no result: None."""
    exercise = get(exercise_id)
    ns = _notebook_namespace() if namespace is None else namespace
    prepared = prepare(exercise, public_only=True)
    try:
        with stopping():
            report = run_steps(trial_steps(exercise, ns, prepared.trials, (), prepared.inputs, filename="<notebook>",
                                           culprit_frames=None))
    except Stop as stop:
        print(f"Self-check stopped ({stop}): no result.")
        return None
    result = judge(exercise, prepared, report, submission="notebook")
    if not quiet:
        print(feedback_text(result))
        print("(Self-check: public checks only. The grader runs every check, also on inputs you do not see.)")
    for hook in AFTER_CHECK:
        try:
            hook(result, report)
        except Exception:  # noqa: BLE001 - what runs after a check must never break it
            pass
    return result
