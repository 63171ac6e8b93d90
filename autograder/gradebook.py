"""A batch's gradebook.csv: one row per submission graded (reports/gradebook.py makes the student gradebook, a row
per student, and the LMS files)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from .files import csv_cell
from .result import Result

GRADEBOOK_FIELDS = ("submission", "exercise", "status", "score", "max_score", "execution_time", "results")


def batch_gradebook_csv(results: Iterable[Result]) -> str:
    """A batch's gradebook.csv: one row per submission, in the given order. Text cells go through csv_cell:
    a name such as `=HYPERLINK(...)` or `-x.py` stays text in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=GRADEBOOK_FIELDS, lineterminator="\n")
    writer.writeheader()
    for result in results:
        writer.writerow({
            "submission": csv_cell(result.submission),
            "exercise": csv_cell(result.exercise),
            "status": result.status.value,
            "score": f"{result.score:g}",
            "max_score": f"{result.max_score:g}",
            "execution_time": f"{result.execution_time:.2f}",
            "results": csv_cell(f"{result.submission}/results.json"),
        })
    return buffer.getvalue()
