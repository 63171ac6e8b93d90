"""Which exercise a submitted file is: the one place that decides it, for `grade`, `check` and the platforms.

The precedence: the notebook's metadata (`metadata.autograder.exercise`) says what the file is; where it says
nothing, the exercise asked for (`--exercise`, a platform's assignment), else the assignment's folder it was
handed in under (`03_residual_add/`, discover.place_of), else the one exercise id the file's name holds
(`01_residual_add.ipynb`, `residual_add-ada.py`, `Residual Add - Ada.ipynb`). A file whose metadata names another
exercise than the one asked for, or an unknown one, or that nothing names, is Malformed, with a message the
student can act on; so is a file handed in under one assignment's folder whose metadata or name says it is
another exercise (never graded and credited as that other one), and one whose assignment's folder and
`--exercise` disagree. Free of torch: `check` decides before it launches its worker.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..feedback.wording import say
from .discover import exercise_named  # the one rule for names, files' and folders' alike
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
    return exercise_named(path.stem, allowed)


def guess(path: Path, asked: str | None, allowed: Collection[str], handed_in_for: str | None = None) -> str | None:
    """The exercise of a file before (or without) reading it: the one asked for, else its assignment's folder's,
    else its name's."""
    return asked or handed_in_for or exercise_from_name(path, allowed)


def exercise_of(answer: Answer | Path, asked: str | None, allowed: Collection[str],
                handed_in_for: str | None = None) -> str | Malformed:
    """The exercise `answer` is graded as (see the module's docstring); a Path stands for a file that could not
    be read, whose name and `asked` alone speak. `handed_in_for`: the exercise of the assignment's folder the
    file was found under (discover.place_of), if any."""
    path = Path(answer.path) if isinstance(answer, Answer) else answer
    declared = answer.declared_exercise if isinstance(answer, Answer) else None
    if handed_in_for is not None:
        wrong = _handed_in_elsewhere(path, declared, asked, handed_in_for, allowed)
        if wrong is not None:
            return wrong
    hint = guess(path, asked, allowed, handed_in_for)
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


def _handed_in_elsewhere(path: Path, declared: str | None, asked: str | None, handed_in_for: str,
                         allowed: Collection[str]) -> Malformed | None:
    """A file handed in under the assignment of `handed_in_for` that says it is another exercise (its metadata,
    else its name), or that `--exercise` asks to grade as another: flagged, under that assignment."""
    if asked is not None and asked != handed_in_for:
        return Malformed(handed_in_for, say("intake: folder and asked differ", file=path.name,
                                            assignment=handed_in_for, asked=asked))
    says = declared if declared is not None else exercise_from_name(path, allowed)
    if says is not None and says != handed_in_for:
        return Malformed(handed_in_for, say("intake: handed in for another assignment", file=path.name,
                                            says=_shown(says), assignment=handed_in_for))
    return None


def _shown(text: str, limit: int = 60) -> str:
    """A name from a submission, quoted and cut short, for a message."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")
