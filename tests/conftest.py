"""Shared fixtures: grading answer code in process (trusted test code only) and reading notebooks."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
import torch

from autograder.exercises import get
from autograder.pipeline import Prepared, judge, prepare, run
from autograder.result import Result
from autograder.runner import InProcessRunner
from autograder.settings import DEFAULT_SALT
from autograder.submission import answer_code

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"

# The tensors under test are tiny: intra-op threads only contend on a shared 2-core machine. OMP_NUM_THREADS, when
# set, wins: .ci/run runs the public-data and self-check tests with 1 and 2 threads (floats differ with the count).
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
EXERCISE_NOTEBOOKS = ROOT / "exercises"

# The files that take minutes, longest first. With `-n auto --dist loadfile`, a file runs whole on one worker,
# in the order below; pytest-xdist's own order (most tests first) started these few-test, long files last, and
# one core then worked alone for minutes at the end. Only the order changes: every test still runs.
LONGEST_FIRST = ("tests/test_book.py", "tests/test_selfcheck_agrees.py", "tests/test_blame_fix.py",
                 "tests/test_platforms_as_root.py", "tests/test_release.py", "tests/test_notebooks.py",
                 "tests/test_blame_safety.py", "tests/test_adding_an_exercise.py", "tests/test_fuzz_submissions.py",
                 "tests/test_blame_repairs.py", "tests/test_workshop_room.py", "tests/test_run_a_class.py")


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # the files go out in the order pytest_collection_modifyitems sets


def pytest_collection_modifyitems(config, items):
    """The longest files first (LONGEST_FIRST), then the others with the most tests first, as xdist orders them."""
    files = [item.nodeid.split("::")[0] for item in items]
    count = {f: files.count(f) for f in set(files)}
    rank = {f: i for i, f in enumerate(LONGEST_FIRST)}
    order = {id(item): (rank.get(f, len(rank)), -count[f], f) for item, f in zip(items, files)}
    items.sort(key=lambda item: order[id(item)])


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
        return judge(exercise, made, run(exercise, code, made, InProcessRunner()), answer=code)

    return _grade
