"""Everything written for people: the text feedback, results.json, gradebook.csv, the summary table."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

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


def gradebook_csv(results: Iterable[dict[str, object]]) -> str:
    """One row per submission, from the results.json contents, in the given order."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=GRADEBOOK_FIELDS, lineterminator="\n")
    writer.writeheader()
    for data in results:
        writer.writerow({
            "submission": data.get("submission", ""),
            "exercise": data.get("exercise", ""),
            "status": data.get("status", ""),
            "score": f"{float(data.get('score', 0)):g}",
            "max_score": f"{float(data.get('max_score', 0)):g}",
            "execution_time": f"{float(data.get('execution_time', 0)):.2f}",
            "results": f"{data.get('submission', '')}/results.json",
        })
    return buffer.getvalue()
