"""Reading a graded folder (the `--out` of `autograder grade`) and deciding whose each submission is.

Whose: a submission found in a sub-folder belongs to the first folder under the graded folder
(`class/ada/01_residual_add.ipynb` -> `ada`); a loose file to its name without the exercise number and id
(`data_trap_ada.py` -> `ada`); a file whose name is only the exercise (`01_residual_add.ipynb`, graded
from a student's own folder) to the folder it was in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePath

from .source import ExportError

UNKNOWN_STUDENT = "(unknown)"


@dataclass(frozen=True)
class Graded:
    folder: str  # the submission's folder under the graded folder (its `submission` name)
    student: str
    exercise: str
    data: dict  # the results.json as written by the grader


def student_of(data: dict) -> str:
    """The student a results.json belongs to, by the rule in this module's docstring."""
    name = str(data.get("submission", ""))
    if "__" in name:
        return name.split("__", 1)[0]
    stem = PurePath(name).stem
    exercise = str(data.get("exercise", ""))
    left = re.sub(rf"(\d+[_-]?)?{re.escape(exercise)}", "", stem) if exercise else stem
    if left.strip("_-. "):
        return left.strip("_-. ")
    path = data.get("submission_path")
    return (PurePath(str(path)).parent.name if path else "") or UNKNOWN_STUDENT


def load(folder: Path) -> list[Graded]:
    """Every FOLDER/<submission>/results.json, sorted by student, then exercise, then submission."""
    if not folder.is_dir():
        raise ExportError(f"{folder} is not a folder: give the --out folder of `autograder grade`")
    graded = []
    for path in sorted(folder.glob("*/results.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ExportError(f"{path} is not a readable results.json ({e}); regrade that submission") from None
        if not isinstance(data, dict) or "exercise" not in data or "tests" not in data:
            raise ExportError(f"{path} is not a results.json written by `autograder grade`")
        graded.append(Graded(path.parent.name, student_of(data), str(data["exercise"]), data))
    if not graded:
        raise ExportError(f"no */results.json under {folder}: grade first with `autograder grade ... --out {folder}`")
    return sorted(graded, key=lambda g: (g.student, g.exercise, g.folder))
