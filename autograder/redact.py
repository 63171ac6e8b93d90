"""An error raised on hidden inputs, as a student may read it: its type, the kind of PyTorch error it is,
and the line of the answer with that line's text taken from the answer itself; never its message, a value,
a shape or a name made at run time, which could describe the hidden inputs."""

from __future__ import annotations

import builtins
import functools
import re

from .messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from .outcome import ANSWER_FILE, ErrorInfo
from .wording import say

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def redacted(error: ErrorInfo, answer: str | None) -> ErrorInfo:
    """The error as it may be shown for a hidden trial: its type (a name from Python, torch or the answer),
    the PyTorch error it is (the fixed words of INPLACE_ERROR or LEAF_INPLACE_ERROR) and no other part of
    its message, the line of the answer with that line's text, and the culprit locator's sites likewise."""
    if error.type == "TamperError":
        return error  # written by the harness from torch's own attribute names: nothing of the inputs
    lines = answer.splitlines() if answer is not None else None
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", answer)) if answer is not None else set()
    kind = INPLACE_ERROR.search(error.message) or LEAF_INPLACE_ERROR.search(error.message)
    message = f"{kind.group(0)} {say('rest not shown')}" if kind else say("message not shown")
    type_name = error.type if _known(error.type, words, exception=True) else say("class made at run time")
    line, code = _line(error.line, error.code, lines)
    culprit = _culprit(error.culprit, lines, words) if kind and error.culprit else None
    return ErrorInfo(type_name, message, line, code, culprit)


def _line(line: object, code: str | None, lines: list[str] | None) -> tuple[int | None, str | None]:
    """A line number of the answer and its text, read from the answer itself where we have it."""
    if not isinstance(line, int) or isinstance(line, bool):
        return None, None
    if lines is None:
        return line, code
    if 1 <= line <= len(lines):
        return line, lines[line - 1].strip()  # quoted in words: its indentation means nothing there
    return None, None


def _culprit(report: object, lines: list[str] | None, words: set[str]) -> dict | None:
    """The locator's report, keeping only its sites in the answer (op names known, code from the answer);
    None if its culprit cannot be shown that way."""
    if not isinstance(report, dict):
        return None

    def frame(s: object) -> dict | None:
        if not isinstance(s, dict) or s.get("file") != ANSWER_FILE:
            return None
        line, code = _line(s.get("line"), s.get("code") if isinstance(s.get("code"), str) else None, lines)
        if line is None:
            return None
        function = s.get("function") if _known(s.get("function"), words) else None
        return {"file": ANSWER_FILE, "line": line, "function": function, "code": code}

    def site(s: object) -> dict | None:
        where = frame(s)
        if where is None or not isinstance(s, dict) or not _known(s.get("op"), words):
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
