"""The one result type: every report (JSON, CSV, HTML, platforms) derives from it, and every reader of a
results.json gets it back through `Result.from_json`, never through guessed defaults."""

from __future__ import annotations

import math
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any

from .status import CHECK_STATUSES, Status

TEACHER_ONLY = "teacher_only"
"""A field's metadata key: results.json's field for the teacher alone; nothing derived from it may reach a
student. Everything else reads the same whatever the salt (timings aside), and holds nothing of the hidden
inputs."""
KEY = "key"
"""A field's metadata key: its key in results.json, where that is not its name."""
MAX_LINES = 16
"""The most answer lines a cause names (where it was raised, the culprit): more is not a fact but noise."""


@dataclass(frozen=True)
class Cause:
    """An error behind failed checks, said once. Checks that met the same error point to it (TestResult.cause),
    so a page or a notebook explains it once and lists the checks after. Every fact a reader needs is a field
    here; `text` is only ever shown, never searched."""

    text: str
    """The error explained in words (feedback.describe): what was raised, where, what it means, the culprit."""
    error: str = ""
    """The exception's class name ("" for a run that sent no report; "?" where it is not shown: an error on hidden
    inputs, feedback/redact.py)."""
    lines: tuple[int, ...] = ()
    """The lines of the answer it names, in order: where it was raised, then the culprit's."""
    op: str = ""
    """The in-place operation the culprit locator named (`torch.Tensor.add_`), if it named one."""
    tampered: bool = False
    """The grader caught the code changing the grader or torch, or forging the worker's report."""


@dataclass(frozen=True)
class TestResult:
    """One check's outcome (Gradescope calls the checks of an autograder "tests")."""

    __test__ = False  # not a pytest test class, though its name starts with Test

    name: str
    score: float
    max_score: float
    status: Status  # one of CHECK_STATUSES
    output: str
    visibility: str  # "visible" (public check) or "after_due_date" (hidden check)
    description: str = ""
    brief: str = ""
    """A failure in a few words, without values (spec's Failed.hidden): what a page says beside a shared cause."""
    trial: str = ""
    """The key of the trial the failure was found in (`train/float32/cpu`; outcome.Trial.from_key), if one."""
    cause: int | None = None
    """The failure's error: an index into Result.causes, or None."""


@dataclass(frozen=True)
class Printed:
    """What the submission printed (batch.STDOUT_KEPT characters of each at most). `teacher_stdout` is all of it,
    hidden trials included; `stdout`, for students, only what a runner could tell was printed before any hidden
    input reached the answer (RunReport.public_stdout). None: nothing printed, or nothing told apart."""

    teacher_stdout: str | None = field(default=None, metadata={TEACHER_ONLY: True})
    stdout: str | None = None


@dataclass(frozen=True)
class SubmittedFile:
    """The file graded: the SHA-256 of the very bytes graded (submission.Answer; "unreadable" where none could be
    read), and its path on the grader's machine."""

    sha256: str | None = field(default=None, metadata={KEY: "submission_sha256"})
    path: str | None = field(default=None, metadata={KEY: "submission_path", TEACHER_ONLY: True})


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
    """Keys of a results.json that no field here reads (an older or newer grader's), kept as they were."""
    causes: tuple[Cause, ...] = ()
    """The errors behind the failures, each once, in the order the checks met them."""
    printed: Printed = Printed()
    grader_traceback: str | None = field(default=None, metadata={TEACHER_ONLY: True})
    """The grader's own traceback, where it failed on this submission (Status.GRADER_ERROR)."""
    source: SubmittedFile | None = None

    @property
    def tampered(self) -> bool:
        return any(c.tampered for c in self.causes)

    def to_json(self) -> dict[str, Any]:
        """results.json: a superset of Gradescope's format (README, results.json). Statuses as plain strings."""
        data = asdict(self)
        data["status"] = Status(self.status).value
        data["tests"] = [{**asdict(t), "status": Status(t.status).value} for t in self.tests]
        data["devices"] = list(self.devices)
        data["score"] = round(self.score, 4)
        data["execution_time"] = round(self.execution_time, 3)
        data["causes"] = [{**asdict(c), "lines": list(c.lines)} for c in self.causes]
        for name in ("extra", *_TYPED):
            del data[name]
        data.update(_typed_json(self.printed))
        if self.grader_traceback is not None:
            data["grader_traceback"] = self.grader_traceback
        data.update(self.extra)
        if self.source is not None:
            data.update(_typed_json(self.source))
        return data

    @classmethod
    def from_json(cls, data: object) -> Result:
        """The inverse of to_json. A results.json may be anyone's (a submission can write one where the grader
        reads), so every field's type and bounds are checked: ValueError, naming the field, for anything
        to_json would not have written. The typed fields' keys (printed, source, grader_traceback) are checked as
        text; other keys go back into `extra`. The fields
        added since the first release (`causes`, and a test's `brief`, `trial`, `cause`) may be missing: a
        results.json of an older grader reads back without them."""
        data = _object(data, _RESULT_FIELDS, "")
        tests = data["tests"]
        if not isinstance(tests, list):
            raise ValueError("`tests`: a list expected")
        devices = data["devices"]
        if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
            raise ValueError("`devices`: a list of strings expected")
        causes = data.get("causes", [])
        if not isinstance(causes, list) or len(causes) > len(tests) + 1:
            raise ValueError("`causes`: a list of at most one cause per check (and one for the run) expected")
        texts = {key: _text(data, key, "") for key in _TEXT_KEYS if key in data}
        sha256, path = texts.get("submission_sha256"), texts.get("submission_path")
        max_score = _number(data, "max_score", "")
        return cls(
            exercise=_text(data, "exercise", ""),
            submission=_text(data, "submission", ""),
            status=_status(data, "status", "", tuple(Status)),
            score=_number(data, "score", "", round(max_score, 4)),  # to_json rounds the score, not its maximum
            max_score=max_score,
            output=_text(data, "output", ""),
            tests=tuple(_check(t, f"tests[{i}].", len(causes)) for i, t in enumerate(tests)),
            devices=tuple(devices),
            execution_time=_number(data, "execution_time", ""),
            causes=tuple(_cause(c, f"causes[{i}].") for i, c in enumerate(causes)),
            extra={k: v for k, v in data.items() if k not in _RESULT_FIELDS and k != "causes" and k not in _TEXT_KEYS},
            printed=Printed(teacher_stdout=texts.get("teacher_stdout"), stdout=texts.get("stdout")),
            grader_traceback=texts.get("grader_traceback"),
            source=SubmittedFile(sha256, path) if sha256 is not None or path is not None else None,
        )


def _key(f: Field) -> str:
    return f.metadata.get(KEY, f.name)


def _typed_json(value: Printed | SubmittedFile) -> dict[str, str]:
    """A typed group's keys in results.json, those with a value."""
    return {_key(f): getattr(value, f.name) for f in fields(value) if getattr(value, f.name) is not None}


def teacher_only_keys() -> frozenset[str]:
    """results.json's keys for the teacher alone (the fields marked TEACHER_ONLY)."""
    kinds = (Result, Printed, SubmittedFile)
    return frozenset(_key(f) for kind in kinds for f in fields(kind) if f.metadata.get(TEACHER_ONLY))


_CHECK_FIELDS = ("name", "score", "max_score", "status", "output", "visibility", "description")
"""A test's fields every results.json has; the others (TestResult's later ones) are optional."""
_TYPED = ("printed", "grader_traceback", "source")
"""Result's fields written as keys of their own (to_json), as the first graders wrote them beside a Result."""
_TEXT_KEYS = (*(_key(f) for kind in (Printed, SubmittedFile) for f in fields(kind)), "grader_traceback")
_RESULT_FIELDS = tuple(f.name for f in fields(Result) if f.name not in ("extra", "causes", *_TYPED))


def _check(data: object, where: str, causes: int) -> TestResult:
    data = _object(data, _CHECK_FIELDS, where)
    max_score = _number(data, "max_score", where)
    cause = data.get("cause")
    if cause is not None and (isinstance(cause, bool) or not isinstance(cause, int) or not 0 <= cause < causes):
        raise ValueError(f"`{where}cause`: null or the index of one of `causes` expected")
    return TestResult(name=_text(data, "name", where), score=_number(data, "score", where, max_score),
                      max_score=max_score, status=_status(data, "status", where, CHECK_STATUSES),
                      output=_text(data, "output", where), visibility=_text(data, "visibility", where),
                      description=_text(data, "description", where), brief=_optional_text(data, "brief", where),
                      trial=_optional_text(data, "trial", where), cause=cause)


def _cause(data: object, where: str) -> Cause:
    data = _object(data, ("text",), where)
    lines = data.get("lines", [])
    if not isinstance(lines, list) or len(lines) > MAX_LINES or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 < n < 1 << 31 for n in lines):
        raise ValueError(f"`{where}lines`: a list of at most {MAX_LINES} line numbers expected")
    tampered = data.get("tampered", False)
    if not isinstance(tampered, bool):
        raise ValueError(f"`{where}tampered`: true or false expected")
    return Cause(text=_text(data, "text", where), error=_optional_text(data, "error", where), lines=tuple(lines),
                 op=_optional_text(data, "op", where), tampered=tampered)


def _optional_text(data: dict, key: str, where: str) -> str:
    return _text(data, key, where) if key in data else ""


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
