"""Which files a batch grades, and under which names. Free of torch, so that `autograder grade` can count
its submissions and start its workers before it imports torch itself."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

SUFFIXES = (".ipynb", ".py")


class DuplicateNames(ValueError):
    """Two files of a batch would share one results folder: a usage error, caught before grading."""


def find_submissions(paths: Iterable[Path]) -> list[Path]:
    """Files named on the command line, and .ipynb/.py files under folders (checkpoints skipped)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*")
                if p.is_file() and p.suffix in SUFFIXES
                and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(path).parts)
            )
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def named_submissions(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The submissions under `paths` and their names; DuplicateNames if two would share a name."""
    files = find_submissions(paths)
    names = [submission_name(p, paths) for p in files]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise DuplicateNames(f"several files would be graded under the same name ({', '.join(clashes)}): "
                             "grade them in separate runs or give them distinct file names")
    return files, names


def submission_name(path: Path, roots: Iterable[Path]) -> str:
    """A stable, file-system-safe name for a submission: its path below the folder it was found in."""
    for root in roots:
        if root.is_dir() and path.is_relative_to(root):
            rel = path.relative_to(root)
            break
    else:
        rel = Path(path.name)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "__".join(rel.with_suffix("").parts) + "." + path.suffix[1:])
