"""Grades one piece of answer code: draw inputs, run it (via a runner), run the reference, judge.

A public-only grading (a self-check) takes its inputs and the reference's outcomes from the data shipped
with the package instead, so it works where the references are not installed.
"""

from __future__ import annotations

from . import trials as trial_plan
from .exercises import get
from .grade import grade
from .harness import run_reference
from .public import load_public
from .result import Result
from .runner import InProcessRunner, Job, Runner


def grade_code(
    exercise_id: str,
    code: str,
    *,
    devices: tuple[str, ...] = ("cpu",),
    seed: int | None = None,
    public_only: bool = False,
    runner: Runner | None = None,
    timeout: float = 60.0,
    submission: str = "",
) -> Result:
    """The whole grading of one answer. The seed defaults to one derived from the code itself; a public-only
    grading ignores it (the public inputs are shipped)."""
    exercise = get(exercise_id)
    trials = trial_plan.plan(exercise, devices, public_only)
    if public_only:  # inputs per scenario and dtype, so they serve every device; outcomes of the CPU
        _, inputs, reference = load_public(exercise)
    else:
        inputs = trial_plan.draw(exercise, trials, trial_plan.derive_seed(exercise_id, code) if seed is None else seed)
        reference = run_reference(exercise, trials, inputs)
    report = (runner or InProcessRunner()).run(Job(exercise_id, code, trials, inputs, timeout))
    return grade(exercise, report, reference, trials, inputs, public_only=public_only, submission=submission,
                 answer=code)
