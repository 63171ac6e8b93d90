"""Shared fixtures: grading answer code in process (trusted test code only) and reading notebooks."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.pipeline import grade_code
from autograder.result import Result
from autograder.submission import answer_code

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"

# The tensors under test are tiny: intra-op threads only contend on a shared 2-core machine.
torch.set_num_threads(1)
EXERCISE_NOTEBOOKS = ROOT / "exercises"


def solution_code(exercise_id: str) -> str:
    """The answer cells of the exercise's solution notebook."""
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    return answer_code(path).code


def failing(result: Result) -> set[str]:
    return {t.name for t in result.tests if t.status == "failed"}


@pytest.fixture
def grade():
    """grade(exercise_id, code) -> Result, in process, on the CPU."""

    def _grade(exercise_id: str, code: str, **kwargs) -> Result:
        return grade_code(exercise_id, code, **kwargs)

    return _grade
