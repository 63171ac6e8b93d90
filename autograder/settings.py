"""How a batch grades: devices, the one exercise it grades (if one), the timeout, the term's salt. Plain
data without torch, so that a platform's grader reads its configuration before it imports torch."""

from __future__ import annotations

from dataclasses import dataclass

TORCH_CHECKED = "2.13.0"
"""The torch the course is checked on (its tests, the bundles' pin, Binder's). Others of the 2.x line may word a
message otherwise or behave otherwise where a release changed; the notebooks' setup cell says so when a
learner's differs, and the course states each such change with its release."""

DEFAULT_SALT = "inplace-course"
"""Mixed into every hidden seed where no salt is given; a batch sets a secret one per term."""


@dataclass(frozen=True)
class Settings:
    devices: tuple[str, ...] = ("cpu",)
    exercise: str | None = None  # every file's; a notebook whose metadata names another is malformed
    timeout: float = 60.0
    salt: str = DEFAULT_SALT  # mixed into every hidden seed; set a secret one per term
