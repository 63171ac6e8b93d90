"""What a participant may send: strict, size-capped JSON bodies. Anything else is refused.

The server faces a room and, through a tunnel, the internet: a body is parsed with `json` only (nothing
is evaluated or unpickled), every key is known, every value has one type, a bounded length and a pattern,
strings hold no control or formatting characters, and names must be the course's own (course.py): an
exercise of the room, its public checks. Standard library only: the client checks what it sends with it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, overload

from ..core.status import Status
from ..feedback.wording import say

MAX_BODY = 8192
"""Bytes of one body; the server's HTTP layer refuses larger bodies before reading them."""

STATUSES = (Status.PASSED, Status.FAILED, Status.NOT_ATTEMPTED, Status.TIMED_OUT, Status.CRASHED)
"""What an attempt may say: CRASHED is a kernel that died during a check (sent when it rejoins)."""
EVENTS = ("seen", "stuck", "done", "left")
MAX_CHECKS = 16
MAX_SEAT = 40
MAX_LINE = 160
MAX_FEEDBACK = 3000
VERSION = 2

PSEUDONYM = re.compile(r"[a-z]{2,12}-[a-z]{2,12}-[0-9]{2,4}")
SECRET = re.compile(r"[A-Za-z0-9_-]{20,64}")
EXERCISE = re.compile(r"[a-z][a-z0-9_]{0,39}")
CHECK = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.,:()/'+-]{0,59}")
REPORT_ID = re.compile(r"[A-Za-z0-9_-]{8,32}")
MAX_AGO = 86400.0  # seconds: how long ago a report kept in a kernel (no answer) may say it was made
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}(\.[A-Za-z_][A-Za-z0-9_]{0,79}){0,5}")


class SchemaError(ValueError):
    """The body is not valid; the message says which field (never echoing its value)."""


@dataclass(frozen=True)
class Attempt:
    """One participant's attempt at an exercise, as its check() posted it: the checks' verdicts and, on failure,
    what the locator and the message said (never the code)."""

    pseudonym: str
    exercise: str
    status: Status  # one of STATUSES
    checks: tuple[tuple[str, bool], ...]
    secret: str | None = None
    error: str | None = None
    op: str | None = None
    grad_mode: bool | None = None
    changed: bool | None = None  # the culprit write is not the report's own line: a tried fix
    line: str | None = None
    feedback: str | None = None
    id: str | None = None  # drawn by the client: a report sent again (its answer lost) counts once
    ago: float = 0.0  # seconds between the check and this post (a report kept while the server did not answer)

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(name for name, passed in self.checks if not passed)


@dataclass(frozen=True)
class Join:
    seat: str = ""
    pseudonym: str | None = None
    secret: str | None = None


@dataclass(frozen=True)
class Event:
    pseudonym: str
    kind: str  # one of EVENTS
    secret: str | None = None


def anonymise_line(code: str) -> str:
    """A culprit line fit for a projector: string literals emptied (they may hold names or paths), the
    comment dropped, whitespace collapsed, at most MAX_LINE characters."""
    code = re.sub(r"""(?s)([rbfuRBFU]{0,2})("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')""", r"\1'…'", code)
    code = code.split("#", 1)[0]
    code = "".join(ch for ch in code if not unicodedata.category(ch).startswith("C"))
    return " ".join(code.split())[:MAX_LINE]


PATH = re.compile(r"""(?<![\w.])(?:[A-Za-z]:)?[\\/](?:[^\s'"`:();,\\/]+[\\/])+[^\s'"`:();,\\/]+""")


def clean_feedback(text: str) -> str:
    """Feedback text a participant chose to share: file paths (which can name the user) replaced by `<cell>`,
    printable characters and newlines only, at most MAX_FEEDBACK."""
    text = PATH.sub("<cell>", text)
    lines = ("".join(ch for ch in line if ch == " " or not unicodedata.category(ch).startswith(("C", "Z")))
             for line in text.splitlines())
    return "\n".join(line.rstrip() for line in lines)[:MAX_FEEDBACK]


@overload
def _text(data: dict, key: str, limit: int, pattern: re.Pattern | None = None, optional: Literal[False] = False,
          newlines: bool = False) -> str: ...
@overload
def _text(data: dict, key: str, limit: int, pattern: re.Pattern | None = None, *, optional: bool,
          newlines: bool = False) -> str | None: ...
def _text(data: dict, key: str, limit: int, pattern: re.Pattern | None = None, optional: bool = False,
          newlines: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise SchemaError(say("workshop: field too long", key=key, limit=limit))
    # isprintable(): no character of the categories C (control, format, ...) or Z but the ASCII space
    if not all(line.isprintable() for line in (value.split("\n") if newlines else (value,))):
        raise SchemaError(say("workshop: field control characters", key=key))
    if pattern is not None and not pattern.fullmatch(value):
        raise SchemaError(say("workshop: field form", key=key))
    return value


def _object(body: bytes, keys: set[str], required: set[str]) -> dict:
    if len(body) > MAX_BODY:
        raise SchemaError(say("workshop: body too large", limit=MAX_BODY))
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SchemaError(say("workshop: not json")) from e
    if not isinstance(data, dict):
        raise SchemaError(say("workshop: not an object"))
    if set(data) - keys or not required <= set(data):
        raise SchemaError(say("workshop: keys"))
    if data["v"] != VERSION or isinstance(data["v"], bool):
        raise SchemaError(say("workshop: version", version=VERSION))
    return data


def _optional_bool(data: dict, key: str) -> bool | None:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise SchemaError(say("workshop: true false or null", key=key))
    return value


ATTEMPT_KEYS = {"v", "pseudonym", "secret", "exercise", "status", "checks", "error", "op", "grad_mode", "line",
               "feedback", "id", "ago", "changed"}


def parse(body: bytes, exercises: tuple[str, ...], checks: dict[str, frozenset[str]] | None = None) -> Attempt:
    """The attempt in `body`, or SchemaError. `exercises`: the room's; `checks`: each one's public check names
    (an exercise missing from it is held to the pattern only)."""
    data = _object(body, ATTEMPT_KEYS, {"v", "pseudonym", "exercise", "status", "checks"})
    exercise = _text(data, "exercise", 40, EXERCISE)
    if exercise not in exercises:
        raise SchemaError(say("workshop: exercise unknown"))
    status = data["status"]
    if status not in STATUSES:
        raise SchemaError(say("workshop: status", statuses=', '.join(STATUSES)))
    items = data["checks"]
    if not isinstance(items, list) or len(items) > MAX_CHECKS:
        raise SchemaError(say("workshop: checks too many", limit=MAX_CHECKS))
    parsed = []
    known = (checks or {}).get(exercise)
    for item in items:
        if not isinstance(item, dict) or set(item) != {"name", "passed"} or not isinstance(item["passed"], bool):
            raise SchemaError(say("workshop: checks items"))
        name = _text(item, "name", 60, CHECK)
        if known is not None and name not in known:
            raise SchemaError(say("workshop: checks not public"))
        parsed.append((name, item["passed"]))
    if len({name for name, _ in parsed}) != len(parsed):
        raise SchemaError(say("workshop: checks twice"))
    line = _text(data, "line", MAX_LINE, optional=True)
    ago = data.get("ago", 0.0)
    if isinstance(ago, bool) or not isinstance(ago, int | float) or not 0 <= ago <= MAX_AGO:
        raise SchemaError(say("workshop: ago", limit=int(MAX_AGO)))
    feedback = _text(data, "feedback", MAX_FEEDBACK, optional=True, newlines=True)
    return Attempt(
        pseudonym=_text(data, "pseudonym", 30, PSEUDONYM), exercise=exercise, status=Status(status),
        checks=tuple(parsed), secret=_text(data, "secret", 64, SECRET, optional=True),
        error=_text(data, "error", 80, DOTTED, optional=True), op=_text(data, "op", 120, DOTTED, optional=True),
        grad_mode=_optional_bool(data, "grad_mode"), changed=_optional_bool(data, "changed"),
        line=anonymise_line(line) if line else None,
        feedback=clean_feedback(feedback) if feedback else None,
        id=_text(data, "id", 32, REPORT_ID, optional=True), ago=float(ago),
    )


def parse_join(body: bytes) -> Join:
    data = _object(body, {"v", "seat", "pseudonym", "secret"}, {"v"})
    if ("pseudonym" in data) != ("secret" in data):
        raise SchemaError(say("workshop: pseudonym and secret"))
    return Join(seat=(_text(data, "seat", MAX_SEAT, optional=True) or "").strip(),
                pseudonym=_text(data, "pseudonym", 30, PSEUDONYM, optional=True),
                secret=_text(data, "secret", 64, SECRET, optional=True))


def parse_event(body: bytes) -> Event:
    data = _object(body, {"v", "pseudonym", "secret", "kind"}, {"v", "pseudonym", "kind"})
    if data["kind"] not in EVENTS:
        raise SchemaError(say("workshop: kind", kinds=', '.join(EVENTS)))
    return Event(_text(data, "pseudonym", 30, PSEUDONYM), data["kind"],
                 _text(data, "secret", 64, SECRET, optional=True))


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")
