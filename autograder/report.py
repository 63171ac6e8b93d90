"""Everything written for people: the text feedback, results.json, gradebook.csv, the summary table."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path

from .files import write_atomically
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


def write_results(result: Result, path: Path) -> None:
    write_atomically(path, json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")


def gradebook_csv(rows: Iterable[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=GRADEBOOK_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return buffer.getvalue()


def gradebook_row(result: Result, results_path: str) -> dict[str, object]:
    return {
        "submission": result.submission,
        "exercise": result.exercise,
        "status": result.status,
        "score": f"{result.score:g}",
        "max_score": f"{result.max_score:g}",
        "execution_time": f"{result.execution_time:.2f}",
        "results": results_path,
    }
