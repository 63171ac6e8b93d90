"""The closed set of statuses: a submission's, a check's, and why a run sent no report. Shared by what crosses
from a worker (outcome.py) and what the grader writes (result.py), so it sits below both."""

from __future__ import annotations

import enum


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
RUN_FAILURES = {Status.TIMED_OUT: "timed out", Status.CRASHED: "crashed", Status.MALFORMED: "malformed"}
"""Why a run sent no report (outcome.RunReport.status): the submission's status is then the same. Each with the
message id (feedback/wording.py) that says so."""
