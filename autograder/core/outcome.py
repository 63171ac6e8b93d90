"""What came back from running code on one trial: observations, or an error, as plain values.

This is the only thing that crosses from a worker (which ran student code) to the grader, so it holds
plain tensors, numbers and strings, never objects the submission made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from .status import Status

ANSWER_FILE = "<answer>"
"""The file name answer code is compiled under: the file of its frames in an ErrorInfo and a culprit report."""

CLASS_NOT_SHOWN = "?"
"""An ErrorInfo's type where its class is not shown (an error on hidden inputs, feedback/redact.py): a fact
(Cause.error), the same whatever the words; feedback says "an exception (its class is not shown ...)"."""


@dataclass(frozen=True)
class Trial:
    """One run of a scenario: in which dtype, on which device."""

    scenario: str
    dtype: str  # "float32", "float64"
    device: str  # "cpu", "cuda"
    public: bool = field(default=False, compare=False)
    """Whether its inputs are the public ones (its scenario's), which anyone may see: set where trials are planned
    (trials.plan), and read wherever it matters (what a message may show, which inputs are drawn from the salt).
    Not part of the key; a Trial made from a key alone counts as hidden."""

    @property
    def key(self) -> str:
        return f"{self.scenario}/{self.dtype}/{self.device}"

    @property
    def input_key(self) -> str:
        """The key of the trial's inputs: a scenario's inputs in one dtype are the same on every device."""
        return f"{self.scenario}/{self.dtype}"

    @property
    def torch_dtype(self) -> torch.dtype:
        import torch  # here, not at the top: the trial's key is read where torch is not (feedback text, pages)

        return getattr(torch, self.dtype)

    @classmethod
    def from_key(cls, key: str) -> Trial:
        scenario, dtype, device = key.split("/")
        return cls(scenario, dtype, device)


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised while running a trial, located in the code under test where possible."""

    type: str
    message: str
    line: int | None = None  # 1-based line of the answer code, innermost frame
    code: str | None = None  # that line's text
    culprit: dict[str, Any] | None = None  # the locator's report for in-place errors

    @property
    def not_attempted(self) -> bool:
        return self.type == "NotImplementedError"

    def to_plain(self) -> dict[str, Any]:
        """As JSON: the worker's report and the shipped public data both carry errors so."""
        return {"type": self.type, "message": self.message, "line": self.line, "code": self.code,
                "culprit": self.culprit}

    @classmethod
    def from_plain(cls, data: object) -> ErrorInfo:
        """The inverse of to_plain, for data anyone may have written (a worker that ran student code): every
        field's type checked, texts cut to MAX_TEXT, the culprit kept only as small plain JSON. ValueError
        names what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("an error must be an object")
        line, code = data.get("line"), data.get("code")
        if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
            raise ValueError("an error's line must be an integer")
        return cls(_text(data.get("type")), _text(data.get("message", "")), line,
                   None if code is None else _text(code), _culprit(data.get("culprit")))


MAX_TEXT = 4000
"""The longest text of an error kept (its message, its line)."""
MAX_CULPRIT = 20_000
"""The largest culprit report kept, as JSON."""


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value[:MAX_TEXT]


def _culprit(value: object) -> dict[str, Any] | None:
    """The locator's report, kept only as what it is: an object of short strings, numbers and lists of them."""
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > 50:
        raise ValueError("a culprit must be a small object")
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        raise ValueError("a culprit must be plain JSON") from None
    if len(text) > MAX_CULPRIT:
        raise ValueError("a culprit report is too large")
    return json.loads(text)


@dataclass(frozen=True)
class Outcome:
    """Observations made before the trial ended, and the error that ended it early, if any."""

    values: dict[str, Any] = field(default_factory=dict)
    error: ErrorInfo | None = None


@dataclass(frozen=True)
class RunReport:
    """Everything a run of one submission produced, as the grader receives it.

    `status` is None when the worker reported; one of RUN_FAILURES (timed out, crashed, malformed) when it
    could not, with `detail` saying why. `problems` maps a required name to what is wrong with it.
    """

    status: Status | None = None
    detail: str = ""
    load_error: ErrorInfo | None = None
    problems: dict[str, str] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    stdout: str = ""
    seconds: float = 0.0  # the run's wall clock, as its runner measured it (never the worker's own word)
    public_stdout: str | None = None  # what it printed before any hidden input reached it; None: unknown
    forged: bool = False  # a report came back that the grader's harness did not sign: the code wrote its own
