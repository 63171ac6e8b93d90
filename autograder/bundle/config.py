"""A bundle's configuration: what it grades and how, written at export time and read in the platform's
container before anything else (so it imports neither torch nor any platform)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..catalog import exercise_ids
from ..feedback import language as languages
from ..feedback.wording import say
from ..settings import DEFAULT_SALT, Settings
from .source import ExportError

CONFIG_NAME = "autograder_config.json"
DEFAULT_MEMORY_MB = 128
"""What a submission may allocate beyond the warm worker. The course's solutions need under 32 MB; the
grader and its worker take about GRADER_MB before any submission runs, and Gradescope's default container
has 768 MB: 128 leaves room for both and a margin."""
MIN_MEMORY_MB = 32
GRADER_MB = 550
"""The grader and its warm worker together (proportional set size, CPU build of torch), measured on the
course's solutions: what a platform's memory limit must hold besides the submission's share."""


@dataclass(frozen=True)
class BundleConfig:
    """What a bundle grades and how; written at export time, read in the container."""

    exercises: tuple[str, ...]
    timeout: float = 60.0
    salt: str = DEFAULT_SALT
    memory_mb: int = DEFAULT_MEMORY_MB  # the worker's Limits.memory, per submission
    fixes: bool = True  # whether feedback may propose a literal fix (export --no-fixes: False)
    language: str = "en"  # what the feedback is written in (export --language; feedback/language.py)
    options: dict[str, str] = field(default_factory=dict)
    """The platform's own settings (Platform.options), as text: Gradescope's visibility of hidden checks."""

    def __post_init__(self) -> None:
        known = exercise_ids()
        unknown = [e for e in self.exercises if e not in known]
        if not self.exercises or unknown:
            raise ExportError(say("cli: export unknown exercises", unknown=unknown or "(none given)",
                                  known=", ".join(known)))
        if self.timeout <= 0:
            raise ExportError(say("cli: export timeout"))
        if isinstance(self.memory_mb, bool) or not isinstance(self.memory_mb, int) or self.memory_mb < MIN_MEMORY_MB:
            raise ExportError(say("cli: export memory", least=MIN_MEMORY_MB, got=repr(self.memory_mb)))
        if not isinstance(self.language, str) or languages.known(self.language) != self.language:
            raise ExportError(say("cli: unknown language", language=repr(self.language),
                                  known=", ".join(languages.LANGUAGES)))
        if not isinstance(self.options, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.options.items()):
            raise ExportError(say("cli: export options"))

    def to_json(self) -> str:
        data = asdict(self)
        data["exercises"] = list(self.exercises)
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path) -> BundleConfig:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(exercises=tuple(data["exercises"]), timeout=float(data.get("timeout", 60.0)),
                   salt=str(data.get("salt", DEFAULT_SALT)), memory_mb=data.get("memory_mb", DEFAULT_MEMORY_MB),
                   options=data.get("options", {}), fixes=data.get("fixes") is not False,
                   language=data.get("language", "en"))

    def settings(self, exercise: str) -> Settings:
        return Settings(devices=("cpu",), exercise=exercise, timeout=self.timeout, salt=self.salt,
                        fixes=self.fixes)
