"""The gradebook an LMS imports: one row per student, one column per exercise, a total.

A cell holds the student's best score for the exercise. It is empty, never 0, where there is no
submission or where the grader itself failed (`grader_error`): the teacher decides those, not a default.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ..exercises import EXERCISES
from ..files import csv_cell
from .graded import Graded


@dataclass(frozen=True)
class Gradebook:
    exercises: tuple[str, ...]
    rows: tuple[tuple[str, dict[str, float | None], float], ...]  # (student, exercise -> score, total)
    max_total: float


def gradebook(graded: list[Graded]) -> Gradebook:
    present = {g.exercise for g in graded}
    exercises = tuple(e for e in EXERCISES if e in present) + tuple(sorted(present - set(EXERCISES)))
    scores: dict[str, dict[str, float | None]] = {}
    for g in graded:
        cells = scores.setdefault(g.student, {})
        score = None if g.data.get("status") == "grader_error" else float(g.data.get("score", 0))
        if score is not None and (cells.get(g.exercise) is None or score > cells[g.exercise]):
            cells[g.exercise] = score
        else:
            cells.setdefault(g.exercise, None)
    rows = tuple((student, cells, sum(v for v in cells.values() if v is not None))
                 for student, cells in sorted(scores.items()))
    max_total = sum(EXERCISES[e].max_score for e in exercises if e in EXERCISES)
    return Gradebook(exercises, rows, max_total)


def gradebook_csv(book: Gradebook) -> str:
    """CSV with the header `student, <exercise ids in course order>, total`; text cells through csv_cell (no
    formulas: a student or exercise named `=HYPERLINK(...)` stays text)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *map(csv_cell, book.exercises), "total"])
    for student, cells, total in book.rows:
        writer.writerow([csv_cell(student), *("" if cells.get(e) is None else f"{cells[e]:g}" for e in book.exercises),
                         f"{total:g}"])
    return buffer.getvalue()
