"""Submissions (.ipynb or .py) -> the answer code to grade, with a clear error for files that can't be.

A submission is read once, bounded (files.read_bounded: no links, no FIFOs or devices, at most
MAX_BYTES), and every way its content can be broken (not UTF-8, not JSON, JSON nested a million deep,
numbers too long to convert, not a notebook, metadata of the wrong type) becomes a SubmissionError whose
message the student can act on.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from ..feedback.wording import say
from .cells import notebook_code
from .files import RefusedFile, read_bounded

ANSWER_TAG = "answer"
"""Code cells carrying this tag are the graded ones (the exercise notebooks mark them)."""

MAX_BYTES = 20_000_000
"""The largest submission read (20 MB); an exercise notebook with its outputs is well below 1 MB."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN = 300
"""Characters of a parser's message kept in a verdict."""


class SubmissionError(Exception):
    """A file that cannot be graded; its message is shown to the student as the verdict. `sha256`: of the
    bytes read, where they could be read (a rerun then knows this very file was already judged)."""

    sha256: str | None = None


@dataclass(frozen=True)
class Answer:
    """A submission as read, once: the code graded and the SHA-256 of the very bytes it came from."""

    path: str
    code: str
    declared_exercise: str | None  # from the notebook's metadata, when it says (always a str when not None)
    sha256: str
    size: int


def _first_line(e: BaseException) -> str:
    lines = str(e).splitlines()
    text = lines[0] if lines and lines[0].strip() else type(e).__name__
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def is_answer_cell(cell: Any) -> bool:
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return False
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return isinstance(tags, list) and ANSWER_TAG in tags


def _read(path: Path) -> bytes:
    try:
        return read_bounded(path, MAX_BYTES)
    except RefusedFile as e:
        raise SubmissionError(str(e)) from None
    except OSError as e:
        raise SubmissionError(say("intake: unreadable", file=path.name, why=e.strerror or _first_line(e))) from None


def _text(path: Path, raw: bytes) -> str:
    """A notebook's text (JSON: UTF-8); a .py file's as Python reads it: in the encoding its PEP 263 coding line
    declares (UTF-8 without one; tokenize.detect_encoding, importlib.util.decode_source)."""
    if path.suffix != ".py":
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise SubmissionError(say("intake: not utf-8", file=path.name)) from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as e:  # not UTF-8 in its first two lines, an unknown encoding, a BOM with another declared
        if not _utf8(b"\n".join(raw.split(b"\n", 2)[:2])):
            raise SubmissionError(say("intake: not utf-8", file=path.name)) from None
        raise SubmissionError(say("intake: bad coding line", file=path.name, why=_first_line(e))) from None
    try:
        return importlib.util.decode_source(raw)
    except UnicodeDecodeError as e:
        if encoding in ("utf-8", "utf-8-sig"):
            raise SubmissionError(say("intake: not utf-8", file=path.name)) from None
        line = raw.count(b"\n", 0, e.start) + 1
        raise SubmissionError(say("intake: not in its encoding", file=path.name, encoding=encoding,
                                  line=line)) from None


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _parse_notebook(path: Path, text: str) -> nbformat.NotebookNode:
    """Reads and validates a notebook's text, turning every way it can be broken into a SubmissionError."""
    if not text.strip():
        raise SubmissionError(say("intake: empty notebook", file=path.name))
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise SubmissionError(say("intake: bad json at", file=path.name, line=e.lineno, column=e.colno,
                                  why=e.msg)) from None
    except RecursionError:
        raise SubmissionError(say("intake: json too deep", file=path.name)) from None
    except ValueError as e:  # e.g. an integer longer than Python converts (4300 digits)
        raise SubmissionError(say("intake: bad json", file=path.name, why=_first_line(e))) from None
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises several types for a file that is JSON but not a notebook
        raise SubmissionError(say("intake: not a notebook", file=path.name, why=_first_line(e))) from None
    return nb


def notebook_exercise(nb: Any) -> str | None:
    """`metadata.autograder.exercise` when it is a non-empty string; None when the notebook does not say or
    its metadata is not of the expected types (a damaged notebook is graded as the exercise it is graded as)."""
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    autograder = metadata.get("autograder") if isinstance(metadata, dict) else None
    exercise = autograder.get("exercise") if isinstance(autograder, dict) else None
    return exercise if isinstance(exercise, str) and exercise.strip() else None


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _no_surrogates(path: Path, code: str) -> str:
    found = _SURROGATE.search(code)
    if found:
        line = code.count("\n", 0, found.start()) + 1
        raise SubmissionError(say("intake: lone surrogate", file=path.name, line=line,
                                  code=f"{ord(found.group()):04X}"))
    return code


def answer_code(path: str | Path) -> Answer:
    """A submission read once (bounded): the graded code (its answer cells, or the whole of a .py file), the
    exercise its metadata declares, and the SHA-256 and size of the bytes it was read from. A SubmissionError
    carries that SHA-256 too, where the bytes could be read."""
    path = Path(path)
    if path.suffix not in (".py", ".ipynb"):
        raise SubmissionError(say("intake: not a submission", file=path.name))
    raw = _read(path)
    digest = hashlib.sha256(raw).hexdigest()
    try:
        code, declared = _answer(path, _text(path, raw))
    except SubmissionError as e:
        e.sha256 = digest
        raise
    return Answer(str(path), code, declared, digest, len(raw))


def _answer(path: Path, text: str) -> tuple[str, str | None]:
    """The answer code of a submission's text, and the exercise its metadata declares."""
    if path.suffix == ".py":
        if not text.strip():
            raise SubmissionError(say("intake: empty py", file=path.name))
        return _no_surrogates(path, text), None
    nb = _parse_notebook(path, text)
    cells = nb.get("cells")
    if not isinstance(cells, list) or not cells:
        raise SubmissionError(say("intake: no cells", file=path.name))
    answers = [c for c in cells if is_answer_cell(c)]
    if not answers:
        raise SubmissionError(say("intake: no answer cells", file=path.name, tag=ANSWER_TAG))
    return _no_surrogates(path, notebook_code([_source(c) for c in answers])), notebook_exercise(nb)
