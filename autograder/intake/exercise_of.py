"""Which exercise a submitted file is: the one place that decides it, for `grade`, `check` and the platforms.

The precedence: the notebook's metadata (`metadata.autograder.exercise`) says what the file is; where it says
nothing, the exercise asked for (`--exercise`, a platform's assignment), else the one exercise id the file's
name holds (`01_residual_add.ipynb`, `residual_add-ada.py`). A file whose metadata names another exercise than
the one asked for, or an unknown one, or that nothing names, is Malformed, with a message the student can act
on. Free of torch: `check` decides before it launches its worker.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..feedback.wording import say
from .submission import Answer

UNKNOWN = "unknown"
"""The exercise a Malformed file is recorded under where nothing names one."""


@dataclass(frozen=True)
class Malformed:
    """A file that is no exercise that can be graded: the exercise it is recorded under, and why."""

    exercise: str
    message: str


def exercise_from_name(path: Path, allowed: Collection[str]) -> str | None:
    """The exercise a file's name points to (`01_residual_add.ipynb`, `residual_add-ada.py`), if exactly one."""
    named = [e for e in allowed if e in path.stem]
    return named[0] if len(named) == 1 else None


def guess(path: Path, asked: str | None, allowed: Collection[str]) -> str | None:
    """The exercise of a file before (or without) reading it: the one asked for, else its name's."""
    return asked or exercise_from_name(path, allowed)


def exercise_of(answer: Answer | Path, asked: str | None, allowed: Collection[str]) -> str | Malformed:
    """The exercise `answer` is graded as (see the module's docstring); a Path stands for a file that could not
    be read, whose name and `asked` alone speak."""
    path = Path(answer.path) if isinstance(answer, Answer) else answer
    declared = answer.declared_exercise if isinstance(answer, Answer) else None
    hint = guess(path, asked, allowed)
    if asked is not None and declared is not None and declared != asked:
        return Malformed(asked, say("intake: another exercise", file=path.name, declared=_shown(declared),
                                    asked=asked))
    if declared is not None and declared not in allowed:
        return Malformed(hint or UNKNOWN, say("intake: unknown declared", file=path.name, declared=_shown(declared),
                                              known=", ".join(allowed)))
    exercise = declared or hint
    if exercise is None:
        return Malformed(UNKNOWN, say("intake: no exercise", file=path.name))
    if exercise not in allowed:
        return Malformed(UNKNOWN, say("intake: unknown asked", asked=_shown(exercise), known=", ".join(allowed)))
    return exercise


def _shown(text: str, limit: int = 60) -> str:
    """A name from a submission, quoted and cut short, for a message."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")
