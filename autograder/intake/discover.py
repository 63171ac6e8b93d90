"""Which files a batch grades, and under which names. Free of torch, so that `autograder grade` can count
its submissions and start its workers before it imports torch itself.

Nothing here opens a submission. Folders are walked without following links: an entry named like a
submission (`*.ipynb`, `*.py`) is found whatever it is (a link, a FIFO, a folder), so that it gets its own
verdict (`malformed`) from the grader instead of being followed or silently skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

SUFFIXES = (".ipynb", ".py")
NAME_LIMIT = 160
"""Characters of a submission's name (a folder name in --out: file systems allow 255 bytes)."""


RESULTS = "results.json"
"""What the grader writes in each submission's folder of --out (named like the submission: `ada.ipynb/`)."""


def _skipped(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


def _identity(path: Path | os.DirEntry) -> tuple[int, int] | None:
    try:
        st = path.stat(follow_symlinks=False)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _walk(folder: Path, excluded: set[tuple[int, int]]) -> list[Path]:
    """Entries named like submissions under `folder`, at any depth, never through a link; sorted. Folders in
    `excluded` (the --out folder) and the grader's own result folders (`ada.ipynb/results.json`, left by an
    earlier run with --out inside the class folder) are neither submissions nor searched."""
    found: list[Path] = []
    todo = [folder]  # a stack, not recursion: a folder can be nested deeper than Python recurses
    while todo:
        here = todo.pop()
        try:
            with os.scandir(here) as entries:
                listed = list(entries)
        except OSError:  # unreadable (permissions) or gone: nothing to grade there
            continue
        for entry in listed:
            if _skipped(entry.name):
                continue
            path = here / entry.name
            try:
                real_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                real_folder = False
            if real_folder and (_identity(entry) in excluded or _is_results_folder(path)):
                continue
            if entry.name.endswith(SUFFIXES):
                found.append(path)  # a file, or something that will be reported as not being one
            if real_folder:
                todo.append(path)
    return sorted(found)


def _is_results_folder(path: Path) -> bool:
    return path.name.endswith(SUFFIXES) and os.path.isfile(path / RESULTS) and not os.path.islink(path / RESULTS)


def _is_folder(path: Path) -> bool:
    """A real folder: not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def find_submissions(paths: Iterable[Path], exclude: Iterable[Path] = ()) -> list[Path]:
    """Files named on the command line, and .ipynb/.py entries under folders (hidden ones and checkpoints
    skipped; links to folders not followed; folders in `exclude`, the --out folder, skipped). A path named on
    the command line that is a link is a submission of its own (the grader refuses it as a link), whatever
    it points to."""
    excluded = {i for i in map(_identity, map(Path, exclude)) if i is not None}
    found: list[Path] = []
    for path in paths:
        if _is_folder(path):
            found += sorted(_walk(path, excluded))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Submission:
    """A file a batch grades, and its name, unique within the batch (its folder in --out)."""

    path: Path
    name: str
    parts: tuple[str, ...] = ()  # its path below the graded folder it was found in (relative_parts)


def named_submissions(paths: list[Path], exclude: Iterable[Path] = ()) -> list[Submission]:
    """The submissions under `paths` (but not under `exclude`, the --out folder), with names unique within the
    batch (see unique_names)."""
    files = find_submissions(paths, exclude)
    parts = [relative_parts(p, paths) for p in files]
    names = unique_names(files, [_name_of(rel) for rel in parts])
    return [Submission(path, name, rel) for path, name, rel in zip(files, names, parts)]


def unique_names(files: list[Path], names: list[str]) -> list[str]:
    """`names` made unique: where several files share a name, one keeps it (a file already called so, else the
    first in sorted path order) and the others get `-2`, `-3`... before the extension, in sorted path order,
    skipping any name already taken (`a_b.py` keeps its name, `a b.py` becomes `a_b-2.py`); so the same files
    always get the same names, whatever order they were given in."""
    taken = set(names)
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        groups.setdefault(name, []).append(i)
    unique = list(names)
    for name, members in sorted(groups.items()):
        if len(members) == 1:
            continue
        stem, dot, suffix = name.rpartition(".")
        stem, suffix = (stem, dot + suffix) if dot else (name, "")
        number = 2
        for i in sorted(members, key=lambda i: (files[i].name != name, str(files[i]), i))[1:]:
            while f"{stem}-{number}{suffix}" in taken:
                number += 1
            unique[i] = f"{stem}-{number}{suffix}"
            taken.add(unique[i])
    return unique


def submission_name(path: Path, roots: Iterable[Path]) -> str:
    """A stable, file-system-safe name for a submission: its path below the folder it was found in (ASCII
    letters, digits, `._-`, at most NAME_LIMIT characters; a long one keeps a hash of the whole)."""
    return _name_of(relative_parts(path, roots))


def relative_parts(path: Path, roots: Iterable[Path]) -> tuple[str, ...]:
    """The parts of `path` below the graded folder it was found in; only its name for a file named itself."""
    for root in roots:
        if _is_folder(root) and path.is_relative_to(root):
            return path.relative_to(root).parts
    return (path.name,)


def safe_part(text: str) -> str:
    """A name as a submission's name writes it: ASCII letters, digits and `._-`, every other run one `_`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _name_of(parts: tuple[str, ...]) -> str:
    rel = PurePath(*parts) if parts else PurePath()
    suffix = re.sub(r"[^A-Za-z0-9]+", "_", rel.suffix[1:])
    stem = "__".join(rel.with_suffix("").parts) if rel.suffix else "__".join(rel.parts)
    name = safe_part(stem) or "_"
    if name in (".", ".."):
        name = name.replace(".", "_")
    if len(name) + len(suffix) + 1 > NAME_LIMIT:
        digest = hashlib.sha256(os.fsencode(str(rel))).hexdigest()[:12]
        name = name[: NAME_LIMIT - len(suffix) - 14] + "-" + digest
    return f"{name}.{suffix}" if suffix else name


def found_as(path: str, name: str) -> tuple[str, ...] | None:
    """The parts of `path` below the folder the batch that named it `name` found it in, proved by that name
    (submission_name, and unique_names' `-2`, `-3`...): the one tail of the path whose name is `name`. None
    where no tail is (a results.json of an older grader, or edited by hand)."""
    parts = PurePath(path).parts
    below_anchor = len(parts) - (1 if PurePath(path).anchor else 0)
    tails = [tuple(parts[len(parts) - k:]) for k in range(1, below_anchor + 1)]
    for tail in tails:
        if _name_of(tail) == name:
            return tail
    for tail in tails:
        made = _name_of(tail)
        stem, dot, suffix = made.rpartition(".")
        stem, suffix = (stem, dot + suffix) if dot else (made, "")
        if re.fullmatch(re.escape(stem) + r"-\d+" + re.escape(suffix), name):
            return tail
    return None


@dataclass(frozen=True)
class Place:
    """Where a submission sits in its class's layout. `owner` is the one name the LMS (or the teacher) set that
    says whose it is: the first folder under the graded folder, or under an assignment's folder there; only
    where there is no such folder, the file's own name (`in_folder` False). Whatever lies below that folder
    is the student's own, whatever it is called. `assignment` is the exercise the assignment's folder names
    (`03_residual_add/`, `Residual add/`), where the file was found in one."""

    owner: str
    in_folder: bool
    assignment: str | None = None


def exercise_named(text: str, allowed: Collection[str]) -> str | None:
    """The exercise a name points to, if exactly one: its id, in any case, with any run of other characters for
    an underscore (`01_residual_add`, `residual_add-ada`, `Residual add`, `03 Residual-Add`)."""
    key = re.sub(r"[^a-z0-9]+", "_", text.casefold())
    named = [e for e in allowed if e in key]
    return named[0] if len(named) == 1 else None


def place_of(parts: tuple[str, ...], exercise_ids: Collection[str]) -> Place:
    """The Place of a submission found at `parts` below the graded folder (relative_parts, found_as). The first
    folder is an assignment's where its name names one exercise (exercise_of.exercise_named), and a folder
    or file lies below it."""
    parts = parts or ("",)
    assignment = exercise_named(parts[0], exercise_ids) if len(parts) > 1 else None
    if assignment is not None:
        parts = parts[1:]
    return Place(parts[0], len(parts) > 1, assignment)
