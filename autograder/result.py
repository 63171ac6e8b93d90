"""The one result type: every report (JSON, CSV, HTML, platforms) derives from it, and every reader of a
results.json gets it back through `Result.from_json`, never through guessed defaults."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any


class Status(str, enum.Enum):
    """A submission's outcome; a check's is PASSED or FAILED. results.json holds the value. Only GRADER_ERROR
    is the grader's fault; it is never a student's 0."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_ATTEMPTED = "not_attempted"
    TIMED_OUT = "timed_out"
    CRASHED = "crashed"
    MALFORMED = "malformed"
    GRADER_ERROR = "grader_error"

    def __str__(self) -> str:
        return self.value  # what an f-string, a CSV cell or a page writes, on every Python


CHECK_STATUSES = (Status.PASSED, Status.FAILED)
"""A check's outcome (TestResult.status)."""
RUN_FAILURES = (Status.TIMED_OUT, Status.CRASHED, Status.MALFORMED)
"""Why a run sent no report (outcome.RunReport.status): the submission's status is then the same."""
TEXT_EXTRAS = ("stdout", "teacher_stdout", "grader_traceback", "submission_sha256", "submission_path")
"""The fields batch.py writes beside a Result's own (its `extra`), all text."""


@dataclass(frozen=True)
class TestResult:
    name: str
    score: float
    max_score: float
    status: Status  # one of CHECK_STATUSES
    output: str
    visibility: str  # "visible" (public check) or "after_due_date" (hidden check)
    description: str = ""


@dataclass(frozen=True)
class Result:
    exercise: str
    submission: str
    status: Status
    score: float
    max_score: float
    output: str
    tests: tuple[TestResult, ...] = ()
    devices: tuple[str, ...] = ("cpu",)
    execution_time: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """results.json: a superset of Gradescope's format (README, results.json). Statuses as plain strings."""
        data = asdict(self)
        data["status"] = Status(self.status).value
        data["tests"] = [{**asdict(t), "status": Status(t.status).value} for t in self.tests]
        data["devices"] = list(self.devices)
        data["score"] = round(self.score, 4)
        data["execution_time"] = round(self.execution_time, 3)
        extra = data.pop("extra")
        data.update(extra)
        return data

    @classmethod
    def from_json(cls, data: object) -> Result:
        """The inverse of to_json. A results.json may be anyone's (a submission can write one where the grader
        reads), so every field's type and bounds are checked: ValueError, naming the field, for anything
        to_json would not have written. Other keys go back into `extra`, TEXT_EXTRAS checked as text."""
        data = _object(data, _RESULT_FIELDS, "")
        tests = data["tests"]
        if not isinstance(tests, list):
            raise ValueError("`tests`: a list expected")
        devices = data["devices"]
        if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
            raise ValueError("`devices`: a list of strings expected")
        for key in TEXT_EXTRAS:
            if key in data:
                _text(data, key, "")
        max_score = _number(data, "max_score", "")
        return cls(
            exercise=_text(data, "exercise", ""),
            submission=_text(data, "submission", ""),
            status=_status(data, "status", "", tuple(Status)),
            score=_number(data, "score", "", round(max_score, 4)),  # to_json rounds the score, not its maximum
            max_score=max_score,
            output=_text(data, "output", ""),
            tests=tuple(_check(t, f"tests[{i}].") for i, t in enumerate(tests)),
            devices=tuple(devices),
            execution_time=_number(data, "execution_time", ""),
            extra={k: v for k, v in data.items() if k not in _RESULT_FIELDS},
        )


_CHECK_FIELDS = tuple(f.name for f in fields(TestResult))
_RESULT_FIELDS = tuple(f.name for f in fields(Result) if f.name != "extra")  # to_json writes `extra`'s keys instead


def _check(data: object, where: str) -> TestResult:
    data = _object(data, _CHECK_FIELDS, where)
    max_score = _number(data, "max_score", where)
    return TestResult(name=_text(data, "name", where), score=_number(data, "score", where, max_score),
                      max_score=max_score, status=_status(data, "status", where, CHECK_STATUSES),
                      output=_text(data, "output", where), visibility=_text(data, "visibility", where),
                      description=_text(data, "description", where))


def _object(data: object, fields: tuple[str, ...], where: str) -> dict:
    """`data`, if it is an object holding every one of `fields`."""
    if not isinstance(data, dict):
        raise ValueError(f"`{where.rstrip('.') or 'results.json'}`: a JSON object expected")
    missing = [f for f in fields if f not in data]
    if missing:
        raise ValueError(f"`{where}{missing[0]}`: missing")
    return data


def _text(data: dict, key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"`{where}{key}`: a string expected, not {type(value).__name__}")
    return value


def _number(data: dict, key: str, where: str, high: float = math.inf) -> float:
    """A number from 0 to `high`, as it was written (an int stays an int: the file reads back the same)."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"`{where}{key}`: a number expected, not {type(value).__name__}")
    try:
        in_bounds = math.isfinite(value) and 0 <= value <= high
    except OverflowError:  # an integer of hundreds of digits
        in_bounds = False
    if not in_bounds:
        bounds = "at least 0" if high == math.inf else f"from 0 to {high:g}"
        raise ValueError(f"`{where}{key}`: a finite number {bounds} expected")
    return value


def _status(data: dict, key: str, where: str, allowed: tuple[Status, ...]) -> Status:
    value = data[key]
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"`{where}{key}`: one of {', '.join(allowed)} expected")
    return Status(value)
