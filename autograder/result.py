"""The one result type: every report (JSON, CSV, HTML, platforms) derives from it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("passed", "failed", "not_attempted", "timed_out", "crashed", "malformed", "grader_error")
"""A submission's outcome. Only `grader_error` is the grader's fault; it is never a student's 0."""


@dataclass(frozen=True)
class TestResult:
    name: str
    score: float
    max_score: float
    status: str  # "passed" or "failed"
    output: str
    visibility: str  # "visible" (public check) or "after_due_date" (hidden check)
    description: str = ""


@dataclass(frozen=True)
class Result:
    exercise: str
    submission: str
    status: str
    score: float
    max_score: float
    output: str
    tests: tuple[TestResult, ...] = ()
    devices: tuple[str, ...] = ("cpu",)
    execution_time: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """results.json: a superset of Gradescope's format (README, results.json)."""
        data = asdict(self)
        data["tests"] = [asdict(t) for t in self.tests]
        data["devices"] = list(self.devices)
        data["score"] = round(self.score, 4)
        data["execution_time"] = round(self.execution_time, 3)
        extra = data.pop("extra")
        data.update(extra)
        return data
