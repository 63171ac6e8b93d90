"""Shared by the attacks: grade files with the real batch and a real warm pool (sandboxed where bubblewrap
works, as in CI), one job after another on one slot, so every attack is followed by an honest classmate."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.batch import Settings, grade_batch
from autograder.exercises import EXERCISES
from autograder.reference_store import known_submissions
from autograder.runner.limits import Limits
from autograder.runner.pool import WarmPool
from autograder.runner.sandbox import bwrap_problem

SANDBOXED = bwrap_problem() is None
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason=f"bubblewrap unavailable: {bwrap_problem()}")


def broken_code(exercise_id: str) -> str:
    """The exercise's documented failure, as its catalogue (references/<id>.py) writes it: code that keeps the bug."""
    return known_submissions(exercise_id).broken


@pytest.fixture(scope="module")
def pool():
    with WarmPool(1, Limits(memory=1024**3)) as warm:
        yield warm


def grade_files(pool, folder: Path, out: Path, files: dict[str, str], exercise: str | None = None) -> dict[str, dict]:
    """Writes `files` (name -> code) into `folder` and grades them in that order; results by file name."""
    for name, code in files.items():
        (folder / name).write_text(code)
    settings = Settings(exercise=exercise, timeout=20)
    results = grade_batch([folder / name for name in files], out, settings, pool, jobs=1)
    return {Path(r["submission_path"]).name: r for r in (r.to_json() for r in results)}


__all__ = ["EXERCISES", "SANDBOXED", "broken_code", "grade_files", "needs_sandbox"]
