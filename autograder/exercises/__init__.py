"""The exercises, one module each. Adding a module here adds an exercise; the core does not change."""

from __future__ import annotations

import importlib
import pkgutil

from ..core.spec import Exercise


def _discover() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        exercise = getattr(module, "EXERCISE", None)
        if isinstance(exercise, Exercise):
            found[exercise.id] = exercise
    return dict(sorted(found.items(), key=lambda item: item[1].number))


EXERCISES: dict[str, Exercise] = _discover()


def get(exercise_id: str) -> Exercise:
    """The exercise with this id, or a KeyError that lists the known ones."""
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise KeyError(f"unknown exercise {exercise_id!r}; known: {', '.join(EXERCISES)}") from None
