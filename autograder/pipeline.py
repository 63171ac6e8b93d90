"""Grades one piece of answer code: draw inputs, run it (via a runner), run the reference, judge."""

from __future__ import annotations

from . import trials as trial_plan
from .exercises import get
from .grade import grade
from .harness import run_reference
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
    """The whole grading of one answer. The seed defaults to one derived from the code itself."""
    exercise = get(exercise_id)
    trials = trial_plan.plan(exercise, devices, public_only)
    if public_only:
        seed = trial_plan.PUBLIC_SEED
    elif seed is None:
        seed = trial_plan.derive_seed(exercise_id, code)
    inputs = trial_plan.draw(exercise, trials, seed)
    report = (runner or InProcessRunner()).run(Job(exercise_id, code, trials, inputs, timeout))
    reference = run_reference(exercise, trials, inputs)
    return grade(exercise, report, reference, trials, inputs, public_only=public_only, submission=submission)
