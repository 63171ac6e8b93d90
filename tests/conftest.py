"""Shared fixtures: grading answer code in process (trusted test code only) and reading notebooks."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
import torch

from autograder.core.result import Result
from autograder.exercises import get
from autograder.intake.submission import answer_code
from autograder.pipeline import Prepared, judge, prepare, regrader, run
from autograder.runner import InProcessRunner
from autograder.settings import DEFAULT_SALT

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"

# The tensors under test are tiny: intra-op threads only contend on a shared 2-core machine. OMP_NUM_THREADS, when
# set, wins: tests/test_cpu_variants.py runs the public-data tests with 1 and 2 threads (floats differ with the
# count).
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
# So does every Python the tests start (kernels, the command line, the book's build, the locator's runs): on two
# cores shared by two workers and their children, torch's second thread waits on busy cores; the capstone's
# training ran 2.9 times slower with it (benchmarks/threads.py).
os.environ.setdefault("OMP_NUM_THREADS", "1")
EXERCISE_NOTEBOOKS = ROOT / "exercises"


def solution_code(exercise_id: str) -> str:
    """The answer cells of the exercise's solution notebook."""
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    return answer_code(path).code


def failing(result: Result) -> set[str]:
    return {t.name for t in result.tests if t.status == "failed"}


@functools.cache
def prepared(exercise_id: str, devices: tuple[str, ...] = ("cpu",), salt: str = DEFAULT_SALT,
             public_only: bool = False) -> Prepared:
    """pipeline.prepare, made once per session for each setting (as batch.Preparations does for a batch)."""
    return prepare(get(exercise_id), devices, salt=salt, public_only=public_only)


@pytest.fixture
def grade():
    """grade(exercise_id, code, devices=, salt=, public_only=) -> Result: the one grading path (pipeline.py),
    in process."""

    def _grade(exercise_id: str, code: str, **settings) -> Result:
        exercise = get(exercise_id)
        made = prepared(exercise_id, **settings)
        runner = InProcessRunner()
        return judge(exercise, made, run(exercise, code, made, runner), answer=code,
                     regrade=regrader(exercise, made, runner, 60.0))

    return _grade
