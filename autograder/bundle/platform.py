"""What a platform is to the course: a small protocol, one module per platform in autograder/platforms/.

A platform (Gradescope, PrairieLearn) starts a fresh container per submission, as root, with the student's
files in one folder, and reads one results file back. The course needs four things from it, and nothing
else in the course names a platform:

- its `layout`: where the container puts the student's files and expects the results, what must be made
  root's alone before student code runs;
- its `limits`: the memory a grading container has, and whether a course can raise it;
- `export`: the bundle it takes (a zip, a folder of questions), written from a BundleConfig;
- `results`: its results file, from the course's Results (and `broken`, for a bundle that cannot grade).

The command line (`autograder export NAME`), the bundle's grader (`python -m autograder.platforms.NAME`,
bundle/grader.py) and the tests take every platform from the registry (autograder/platforms/__init__.py).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.result import Result
    from .config import BundleConfig


@dataclass(frozen=True)
class Layout:
    """Where things are in the platform's container, relative to its root (AUTOGRADER_ROOT replaces `root`)."""

    root: str
    """The container's folder for grading (/autograder, /grade)."""
    submission: str
    """The student's files."""
    results: str
    """The folder the platform reads results.json from (made root's to write, readable by all)."""
    private: tuple[str, ...]
    """Folders made root's alone before student code runs: the configuration, the references, the submission."""


@dataclass(frozen=True)
class MemoryLimit:
    """The memory a platform's grading container has, by default, and how a course changes it."""

    mb: int
    raise_where: str | None
    """Where a course raises it (None: it cannot)."""


class Platform(Protocol):
    """One platform. Its module defines `PLATFORM`, an object with these members."""

    name: str
    """The subcommand (`autograder export NAME`) and the module (`autograder.platforms.NAME`)."""
    summary: str
    """What `export NAME` writes, in a few words (its help line)."""
    layout: Layout
    memory: MemoryLimit

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """The export's options of this platform alone (the common ones are platforms/export.py's)."""

    def options(self, args: argparse.Namespace) -> dict[str, str]:
        """The values of those options that the bundle's grader needs (BundleConfig.options)."""

    def export(self, out: Path, config: BundleConfig, args: argparse.Namespace) -> list[str]:
        """Writes the bundle into `out`; returns what to tell the teacher (where it went, what to do next)."""

    def add_container_options(self, parser: argparse.ArgumentParser) -> None:
        """The arguments the platform's container passes to the grader, beyond --root."""

    def config_path(self, root: Path, args: argparse.Namespace) -> Path:
        """The bundle's configuration in the container."""

    def graded(self, config: BundleConfig, args: argparse.Namespace) -> BundleConfig:
        """The configuration of this run (PrairieLearn grades one question's exercise); may raise ExportError."""

    def results(self, results: list[Result], config: BundleConfig, seconds: float, note: str) -> dict[str, Any]:
        """The platform's results.json from one Result per exercise graded; `note`: a line for the student."""

    def broken(self, why: str, seconds: float) -> dict[str, Any]:
        """The platform's results.json when the bundle itself cannot grade: nothing counted, and why."""

    def message(self, data: dict[str, Any]) -> str:
        """The line the grader prints (the platforms show it to staff)."""
