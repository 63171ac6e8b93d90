"""A Result as a student reads it in a terminal or a notebook: one line per check, what to fix under each
failed one."""

from __future__ import annotations

from .result import Result
from .status import Status

FOOTER = "(Self-check: public checks only. The grader runs every check, also on inputs you do not see.)"


def feedback_text(result: Result) -> str:
    """The feedback a student reads: one line per check, what to fix under each failed one."""
    lines = [f"{result.exercise}: {result.output}"]
    for t in result.tests:
        mark = "PASS" if t.status == Status.PASSED else "FAIL"
        hidden = "" if t.visibility == "visible" else " (hidden inputs)"
        lines.append(f"  [{mark}] {t.name}: {t.score:g}/{t.max_score:g}{hidden}")
        if t.status == Status.FAILED and t.output:
            lines += ["        " + line for line in t.output.splitlines()]
    return "\n".join(lines)
