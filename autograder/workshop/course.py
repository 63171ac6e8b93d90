"""What the server knows of the course without torch: the exercises, their public check names, the names of
in-place ops and errors it accepts, and the known wrong answers, as `autograder workshop misconceptions`
wrote them into course.json (package data, generated from the catalogues in references/).

An attempt is matched to a known wrong answer by its signature: the public checks it fails, the error's
class, the culprit op, and whether grad mode was on at the culprit write (which tells `no_grad` around `+=`
from the untouched `+=`). Only labels and explanations are shipped and shown, never anyone's code.
Standard library only: the participant's client computes signatures with it too.
"""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..catalog import exercise_ids
from ..feedback.wording import say

DATA = Path(__file__).resolve().parent / "course.json"
FORMAT = 1


def signature(failing: list[str] | tuple[str, ...], error: str | None, op: str | None,
              grad_mode: bool | None) -> str:
    """One failing run's signature, as a canonical string (the key course.json's table uses)."""
    return json.dumps([sorted(set(failing)), error, op, grad_mode if op else None], separators=(",", ":"))


def normalise_line(line: str) -> str:
    """A culprit line as compared with the report's: its tokens, single-spaced, without its comment (`out +=x  #
    the skip` is `out += x`); a line that does not tokenize, its words."""
    import io
    import tokenize

    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        tokens = [t.string for t in tokenize.generate_tokens(io.StringIO(line.strip()).readline) if t.type not in skip]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return " ".join(line.split())
    return " ".join(tokens)


@dataclass(frozen=True)
class Misconception:
    """A known wrong answer (or several that fail alike): words only."""

    id: str
    exercise: str
    label: str
    explanation: str
    read: str  # where the course explains it (a chapter of the book)

    def to_json(self) -> dict:
        return {"id": self.id, "exercise": self.exercise, "label": self.label, "explanation": self.explanation,
                "read": self.read}


@dataclass(frozen=True)
class Course:
    exercises: tuple[str, ...]
    checks: dict[str, frozenset[str]]  # exercise -> its public check names ({} where course.json lacks it)
    titles: dict[str, str]
    table: dict[tuple[str, str], Misconception]  # (exercise, signature) -> misconception
    by_id: dict[str, Misconception]
    ops: frozenset[str]
    errors: frozenset[str]
    bug_lines: dict[str, str] = field(default_factory=dict)  # exercise -> the report's culprit line, normalised
    # exercise -> (the bug's misconception id, "a tried fix that fails like the bug")
    tried: dict[str, tuple[str, Misconception]] = field(default_factory=dict)

    def restricted(self, exercises: tuple[str, ...]) -> Course:
        """The same course, its room limited to `exercises` (ValueError names any that are not the course's)."""
        unknown = [e for e in exercises if e not in self.exercises]
        if unknown or not exercises:
            raise ValueError(say("workshop: not exercises", unknown=", ".join(unknown) or "(none given)",
                                 exercises=", ".join(self.exercises)))
        return Course(tuple(dict.fromkeys(exercises)), self.checks, self.titles, self.table, self.by_id, self.ops,
                      self.errors, self.bug_lines, self.tried)

    def match(self, exercise: str, failing: tuple[str, ...], error: str | None, op: str | None,
              grad_mode: bool | None, changed: bool | None = None) -> Misconception | None:
        """The known wrong answer that fails this way. One that fails exactly like the report's bug, whose
        culprit write is not the bug's line (`changed`, as the participant's kernel saw it), is a tried fix
        that failed, never "the bug, unchanged"."""
        found = self.table.get((exercise, signature(failing, error, op, grad_mode)))
        bug, tried = self.tried.get(exercise, (None, None))
        return tried if found is not None and changed and found.id == bug else found

    def changed(self, exercise: str, line: str | None) -> bool | None:
        """Whether a culprit line is not the report's own (None: no line, or no bug line known)."""
        bug = self.bug_lines.get(exercise)
        return None if line is None or bug is None else normalise_line(line) != bug

    def op(self, name: str | None) -> str | None:
        """The op if the course knows it (an in-place op of torch), else None: nothing else reaches a screen."""
        return name if name in self.ops else None

    def error(self, name: str | None) -> str | None:
        return name if name in self.errors else None


def _python_errors() -> set[str]:
    return {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


@lru_cache(maxsize=4)
def load(path: Path = DATA) -> Course:
    """course.json, checked; an exercise of the course that it lacks is still accepted (its check names by
    pattern only, no misconceptions) until `autograder workshop misconceptions` is run again."""
    data: dict[str, Any] = (json.loads(path.read_text(encoding="utf-8")) if path.is_file()
                            else {"format": FORMAT, "exercises": {}})
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: format {data.get('format')!r}, expected {FORMAT}")
    ids = exercise_ids()
    checks, titles, table, by_id, bug_lines, tried = {}, {}, {}, {}, {}, {}
    for exercise, entry in data["exercises"].items():
        if exercise not in ids:
            continue  # an exercise since removed from the course
        checks[exercise] = frozenset(entry["checks"])
        titles[exercise] = entry["title"]
        for m in entry["misconceptions"]:
            found = Misconception(m["id"], exercise, m["label"], m["explanation"], m["read"])
            table[exercise, m["signature"]] = by_id[found.id] = found
        if entry.get("tried") and entry.get("bug_line"):
            m = entry["tried"]
            by_id[m["id"]] = Misconception(m["id"], exercise, m["label"], m["explanation"], m["read"])
            tried[exercise] = (m["instead_of"], by_id[m["id"]])
            bug_lines[exercise] = entry["bug_line"]
    return Course(ids, checks, titles, table, by_id, frozenset(data.get("ops", ())),
                  frozenset(data.get("errors", ())) | _python_errors(), bug_lines, tried)
