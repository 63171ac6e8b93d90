"""Grading inside a platform's container: one student's files against the exercises a bundle covers.

Gradescope and PrairieLearn both start a fresh container per submission with the student's files in a
folder; this module finds which file is which exercise and grades each with the batch grader's
`grade_file`, so a bundle scores exactly as `autograder grade` does.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..batch import Settings, exercise_from_name, find_submissions, grade_file, malformed
from ..exercises import EXERCISES
from ..result import Result
from ..runner import Runner
from ..runner.limits import Limits
from ..runner.pool import WarmPool
from ..submission import SubmissionError, answer_code
from .source import ExportError

CONFIG_NAME = "autograder_config.json"
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


@dataclass(frozen=True)
class BundleConfig:
    """What a bundle grades and how; written at export time, read in the container."""

    exercises: tuple[str, ...]
    timeout: float = 60.0
    salt: str = Settings.salt
    hidden_visibility: str = "after_due_date"  # Gradescope's visibility for the course's hidden checks

    def __post_init__(self) -> None:
        unknown = [e for e in self.exercises if e not in EXERCISES]
        if not self.exercises or unknown:
            raise ExportError(f"unknown exercise(s) {unknown or '(none given)'}; known: {', '.join(EXERCISES)}")
        if self.hidden_visibility not in GRADESCOPE_VISIBILITIES:
            raise ExportError(f"hidden visibility must be one of {', '.join(GRADESCOPE_VISIBILITIES)}")
        if self.timeout <= 0:
            raise ExportError("timeout must be positive")

    def to_json(self) -> str:
        data = asdict(self)
        data["exercises"] = list(self.exercises)
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path) -> BundleConfig:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(exercises=tuple(data["exercises"]), timeout=float(data.get("timeout", 60.0)),
                   salt=str(data.get("salt", Settings.salt)),
                   hidden_visibility=str(data.get("hidden_visibility", "after_due_date")))

    def settings(self, exercise: str) -> Settings:
        return Settings(devices=("cpu",), exercise=exercise, timeout=self.timeout, salt=self.salt)


def make_runner() -> WarmPool:
    """One warm worker (use it with `with`). The platform's container is the outer sandbox (one submission,
    thrown away afterwards); bubblewrap is used inside it too where it runs, and its absence is only logged."""
    pool = WarmPool(1, Limits(timeout=60.0))
    if pool.warning:
        print(pool.warning, file=sys.stderr)
    return pool


def declared_exercise(path: Path) -> str | None:
    """The exercise a file says it is: notebook metadata first, then its name; None if neither says."""
    try:
        declared = answer_code(path).exercise
    except (SubmissionError, OSError):
        declared = None
    return declared or exercise_from_name(path)


def notebook_name(exercise_id: str) -> str:
    return f"{EXERCISES[exercise_id].number:02d}_{exercise_id}.ipynb"


def not_submitted(exercise_id: str, found: list[Path]) -> Result:
    names = ", ".join(p.name for p in found) or "no .ipynb or .py file"
    return Result(exercise=exercise_id, submission="", status="not_attempted", score=0.0,
                  max_score=EXERCISES[exercise_id].max_score,
                  output=f"No file for exercise {exercise_id} was found among what you submitted ({names}). "
                         f"Submit {notebook_name(exercise_id)}, the exercise notebook with your answer.")


def grade_folder(folder: Path, config: BundleConfig, runner: Runner) -> list[Result]:
    """One Result per exercise of the bundle, in the bundle's order, whatever the folder holds."""
    files = find_submissions([folder]) if folder.is_dir() else []
    declared = {path: declared_exercise(path) for path in files}
    results = []
    for exercise_id in config.exercises:
        mine = [p for p in files if declared[p] == exercise_id]
        if not mine and len(config.exercises) == 1 and len(files) == 1:
            mine = files  # one file for a one-exercise assignment: it is that exercise, whatever its name
        if not mine:
            results.append(not_submitted(exercise_id, files))
            continue
        path = mine[0]
        name = path.relative_to(folder).as_posix()
        other = declared[path]
        if other is not None and other != exercise_id and other in EXERCISES:
            results.append(malformed(name, exercise_id, f"{path.name} is the notebook of exercise {other}, but this "
                                     f"assignment grades {exercise_id}: submit {notebook_name(exercise_id)}.",
                                     EXERCISES[exercise_id].max_score))
            continue
        result = grade_file(path, name, config.settings(exercise_id), runner)
        if len(mine) > 1:  # say which copy counted, so a student who uploaded two is not left guessing
            others = ", ".join(p.relative_to(folder).as_posix() for p in mine[1:])
            result = replace(result, output=f"{result.output} (Graded {name}; not graded: {others}.)")
        results.append(result)
    return results
