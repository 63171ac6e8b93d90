"""An error raised on hidden inputs, as a student may read it: its type, the kind of PyTorch error it is,
and the line of the answer with that line's text taken from the answer itself; never its message, a value,
a shape or a name made at run time, which could describe the hidden inputs.

Nor anything a submission could choose from what it received. A line is named only where the public trials
(the same inputs in every batch) raised, wrote or saved there too: otherwise the line an answer raises at
could be computed from a hidden input (a thousand lines, a branch each, hold ten bits). Likewise an exception
class is named only where the public trials raised it too (an answer may define a thousand, or pick among
Python's), and a function name is never named. What stays is a few bits at most: which kind of PyTorch error,
which torch in-place op.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from ..core.outcome import ANSWER_FILE, ErrorInfo
from .wording import say


@dataclass(frozen=True)
class Seen:
    """What the public trials showed of the answer: the lines they raised at, wrote or saved at (the culprit
    locator's sites), and the exception classes they raised. A hidden trial's error may name only these."""

    lines: frozenset[int] = frozenset()
    types: frozenset[str] = frozenset()

    @classmethod
    def of(cls, errors: Iterable[ErrorInfo]) -> Seen:
        lines: set[int] = set()
        types: set[str] = set()
        for error in errors:
            types.add(error.type)
            if isinstance(error.line, int):
                lines.add(error.line)
            lines.update(_site_lines(error.culprit))
        return cls(frozenset(lines), frozenset(types))


def _site_lines(report: object) -> set[int]:
    """Every line of the answer a culprit report names (its culprit, saver, other writes, and their chains)."""
    found: set[int] = set()
    if not isinstance(report, dict):
        return found
    sites = [report.get("culprit"), report.get("saved_by")]
    sites += report["modifications"] if isinstance(report.get("modifications"), list) else []
    for site in sites:
        if isinstance(site, dict):
            frames = [site, *(site["chain"] if isinstance(site.get("chain"), list) else [])]
            found.update(f["line"] for f in frames if isinstance(f, dict) and f.get("file") == ANSWER_FILE
                         and isinstance(f.get("line"), int) and not isinstance(f.get("line"), bool))
    return found

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def redacted(error: ErrorInfo, answer: str | None, seen: Seen | None = None) -> ErrorInfo:
    """The error as it may be shown for a hidden trial: its type (where the public trials raised it too), the
    PyTorch error it is (the fixed words of INPLACE_ERROR or LEAF_INPLACE_ERROR)
    and no other part of its message, the line of the answer with that line's text where the public trials
    met that line too (`seen`), and the culprit locator's sites likewise."""
    if error.type == "TamperError":
        return error  # written by the harness from torch's own attribute names: nothing of the inputs
    seen = seen or Seen()
    lines = answer.splitlines() if answer is not None else None
    kind = INPLACE_ERROR.search(error.message) or LEAF_INPLACE_ERROR.search(error.message)
    message = f"{kind.group(0)} {say('rest not shown')}" if kind else say("message not shown")
    type_name = error.type if error.type in seen.types else say("class not shown")
    line, code = _line(error.line, error.code, lines, seen)
    culprit = _culprit(error.culprit, lines, seen) if kind and error.culprit else None
    return ErrorInfo(type_name, message, line, code, culprit)


def _line(line: object, code: str | None, lines: list[str] | None, seen: Seen) -> tuple[int | None, str | None]:
    """A line number of the answer and its text (read from the answer itself where we have it), where the
    public trials met that line too; else none."""
    if not isinstance(line, int) or isinstance(line, bool) or line not in seen.lines:
        return None, None
    if lines is None:
        return line, code
    if 1 <= line <= len(lines):
        return line, lines[line - 1].strip()  # quoted in words: its indentation means nothing there
    return None, None


def _culprit(report: object, lines: list[str] | None, seen: Seen) -> dict | None:
    """The locator's report, keeping only its sites in the answer (op names known, code from the answer);
    None if its culprit cannot be shown that way."""
    if not isinstance(report, dict):
        return None

    def frame(s: object) -> dict | None:
        if not isinstance(s, dict) or s.get("file") != ANSWER_FILE:
            return None
        line, code = _line(s.get("line"), s.get("code") if isinstance(s.get("code"), str) else None, lines, seen)
        if line is None:
            return None
        return {"file": ANSWER_FILE, "line": line, "function": None, "code": code}

    def site(s: object) -> dict | None:
        where = frame(s)
        if where is None or not isinstance(s, dict) or not _known(s.get("op"), set()):
            return None
        links = s.get("chain")
        chain = [f for f in map(frame, links if isinstance(links, list) else []) if f is not None]
        return {"op": s["op"], **where, "chain": chain}

    culprit = site(report.get("culprit"))
    if culprit is None:
        return None
    found: dict = {"culprit": culprit}
    saved = site(report.get("saved_by"))
    if saved is not None:
        found["saved_by"] = saved
    mods = report.get("modifications")
    found["modifications"] = [m for m in (site(m) for m in (mods if isinstance(mods, list) else [])) if m is not None]
    return found


def _known(name: object, words: set[str], exception: bool = False) -> bool:
    """A name the student may read for a hidden trial: one Python or torch defines, or one written in the
    answer. A name made at run time (a class or function named after the inputs) is not."""
    if not isinstance(name, str) or len(name) > 120 or not _NAME.fullmatch(name):
        return False
    if exception:
        return name in _exception_names() or name in words
    return name.startswith("torch.") or all(part in words or part in _python_names() for part in name.split("."))


@functools.cache
def _exception_names() -> frozenset[str]:
    """The exception classes of Python and torch, as this (the grader's) process knows them."""
    found, todo = set(), [BaseException]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in ("builtins", "torch") and sub.__name__ not in found:
                found.add(sub.__name__)
                todo.append(sub)
    return frozenset(found | {"BaseException", "SystemExit"})


@functools.cache
def _python_names() -> frozenset[str]:
    return frozenset(dir(builtins))
