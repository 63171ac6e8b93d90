"""The one thing a participant may send: a strict, size-capped report. Anything else is refused.

The server faces a room and, through a tunnel, the internet: a report is parsed with `json` only (nothing
is evaluated or unpickled), every key is known, every value has one type, a bounded length and a pattern,
and strings hold no control or formatting characters. Standard library only: the client uses it too.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from ..result import Status

MAX_BODY = 4096
"""Bytes of one report's JSON; the server's HTTP layer refuses larger bodies before reading them."""

STATUSES = (Status.PASSED, Status.FAILED, Status.NOT_ATTEMPTED)
"""What a report may say; the client sends any other status of a check() as FAILED."""
MAX_CHECKS = 16
MAX_SEAT = 40
MAX_LINE = 160

PSEUDONYM = re.compile(r"[a-z]{2,12}-[a-z]{2,12}-[0-9]{2,4}")
EXERCISE = re.compile(r"[a-z][a-z0-9_]{0,39}")
CHECK = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.,:()/'+-]{0,59}")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}(\.[A-Za-z_][A-Za-z0-9_]{0,79}){0,5}")
KEYS = {"v", "pseudonym", "seat", "exercise", "status", "checks", "error", "op", "line"}
REQUIRED = {"v", "pseudonym", "exercise", "status", "checks"}


class SchemaError(ValueError):
    """The body is not a valid report; the message says which field (never echoing its value)."""


@dataclass(frozen=True)
class Report:
    pseudonym: str
    exercise: str
    status: Status  # one of STATUSES
    checks: tuple[tuple[str, bool], ...]
    seat: str = ""
    error: str | None = None
    op: str | None = None
    line: str | None = None

    def to_json(self) -> dict:
        return {"v": 1, "pseudonym": self.pseudonym, "seat": self.seat, "exercise": self.exercise,
                "status": self.status.value, "checks": [{"name": n, "passed": p} for n, p in self.checks],
                "error": self.error, "op": self.op, "line": self.line}


def anonymise_line(code: str) -> str:
    """A culprit line fit for a projector: string literals emptied (they may hold names or paths), the
    comment dropped, whitespace collapsed, at most MAX_LINE characters."""
    code = re.sub(r"""(?s)([rbfuRBFU]{0,2})("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')""", r"\1'…'", code)
    code = code.split("#", 1)[0]
    code = "".join(ch for ch in code if not unicodedata.category(ch).startswith("C"))
    return " ".join(code.split())[:MAX_LINE]


def _text(data: dict, key: str, limit: int, pattern: re.Pattern | None = None, optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise SchemaError(f"{key}: a string of at most {limit} characters")
    if any(unicodedata.category(ch).startswith(("C", "Z")) and ch != " " for ch in value):
        raise SchemaError(f"{key}: control or formatting characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise SchemaError(f"{key}: not in the expected form")
    return value


def parse(body: bytes, exercises: tuple[str, ...]) -> Report:
    """The report in `body`, or SchemaError. `exercises`: the ids the server accepts."""
    if len(body) > MAX_BODY:
        raise SchemaError(f"body over {MAX_BODY} bytes")
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SchemaError("not JSON") from e
    if not isinstance(data, dict):
        raise SchemaError("not a JSON object")
    unknown = set(data) - KEYS
    if unknown or not REQUIRED <= set(data):
        raise SchemaError("unknown or missing keys")
    if data["v"] != 1 or isinstance(data["v"], bool):
        raise SchemaError("v: must be 1")
    exercise = _text(data, "exercise", 40, EXERCISE)
    if exercise not in exercises:
        raise SchemaError("exercise: not an exercise of this course")
    status = data["status"]
    if status not in STATUSES:
        raise SchemaError(f"status: one of {', '.join(STATUSES)}")
    checks = data["checks"]
    if not isinstance(checks, list) or len(checks) > MAX_CHECKS:
        raise SchemaError(f"checks: a list of at most {MAX_CHECKS}")
    parsed = []
    for item in checks:
        if not isinstance(item, dict) or set(item) != {"name", "passed"} or not isinstance(item["passed"], bool):
            raise SchemaError("checks: items are {name, passed}")
        parsed.append((_text(item, "name", 60, CHECK), item["passed"]))
    if len({name for name, _ in parsed}) != len(parsed):
        raise SchemaError("checks: a name twice")
    line = _text(data, "line", MAX_LINE, optional=True)
    return Report(
        pseudonym=_text(data, "pseudonym", 30, PSEUDONYM),
        exercise=exercise,
        status=Status(status),
        checks=tuple(parsed),
        seat=(_text(data, "seat", MAX_SEAT, optional=True) or "").strip(),
        error=_text(data, "error", 80, DOTTED, optional=True),
        op=_text(data, "op", 120, DOTTED, optional=True),
        line=anonymise_line(line) if line else None,
    )


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
