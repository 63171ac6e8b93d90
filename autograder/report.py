"""Everything written for people: the text feedback, results.json, gradebook.csv, the summary table."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable

from .files import csv_cell
from .result import Result

GRADEBOOK_FIELDS = ("submission", "exercise", "status", "score", "max_score", "execution_time", "results")


def feedback_text(result: Result) -> str:
    """The feedback a student reads: one line per check, what to fix under each failed one."""
    lines = [f"{result.exercise}: {result.output}"]
    for t in result.tests:
        mark = "PASS" if t.status == "passed" else "FAIL"
        hidden = "" if t.visibility == "visible" else " (hidden inputs)"
        lines.append(f"  [{mark}] {t.name}: {t.score:g}/{t.max_score:g}{hidden}")
        if t.status == "failed" and t.output:
            lines += ["        " + line for line in t.output.splitlines()]
    return "\n".join(lines)


def _number(value: object) -> float:
    """A number from results.json, 0 where it holds something else."""
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def gradebook_csv(results: Iterable[dict[str, object]]) -> str:
    """One row per submission, from the results.json contents, in the given order. Text cells go through
    csv_cell: a name such as `=HYPERLINK(...)` or `-x.py` stays text in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=GRADEBOOK_FIELDS, lineterminator="\n")
    writer.writeheader()
    for data in results:
        data = data if isinstance(data, dict) else {}
        submission = str(data.get("submission", ""))
        writer.writerow({
            "submission": csv_cell(submission),
            "exercise": csv_cell(data.get("exercise", "")),
            "status": csv_cell(data.get("status", "")),
            "score": f"{_number(data.get('score', 0)):g}",
            "max_score": f"{_number(data.get('max_score', 0)):g}",
            "execution_time": f"{_number(data.get('execution_time', 0)):.2f}",
            "results": csv_cell(f"{submission}/results.json"),
        })
    return buffer.getvalue()
