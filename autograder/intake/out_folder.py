"""The --out folder of `autograder grade`: under which name each submission's result is written, so that grading a
file again replaces its result instead of adding a second one beside it. Free of torch: `grade` names its
submissions before it starts its workers.

OUT/graded_from.json (RECORD, written by the batch at its end) keeps:

- `roots`: the class folders graded into OUT (absolute, links resolved), in the order first graded. A file under
  one of them is named by its path below the first that holds it, whatever path the command was given:
  `grade class/ada` or `grade class/ada/03_x.ipynb`, after `grade class`, names Ada's file `ada__03_x.ipynb`
  again. So a student's folder named after a classmate (`class/ada/bob/03_x.ipynb`) is `ada__bob__03_x.ipynb`
  whichever folder is graded, never `bob__03_x.ipynb`, Bob's.
- `files`: the file each submission name holds (absolute). A file graded before keeps its name; a name that
  holds another file's result (in the record, or in its results.json where the record does not say) is never
  given to this one, which gets `-2`, `-3`... So no name a student chooses replaces another file's result.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .discover import NAME_LIMIT, RESULTS, Submission, find_submissions, relative_parts, submission_name, unique_names
from .files import json_text, read_bounded, write_atomically

RECORD = "graded_from.json"
RECORD_LIMIT = 50_000_000
"""Bytes of the record read at most (a class of 10,000 files is about 2 MB)."""
RESULTS_LIMIT = 20_000_000


def where(path: Path, folders: dict[str, str] | None = None) -> str:
    """The file's absolute path, its folders' links resolved (not the file's own: a link is refused, not followed).
    `folders`: real paths of folders resolved already, to reuse."""
    absolute = os.path.abspath(path)
    parent, name = os.path.split(absolute)
    if folders is None:
        return os.path.join(os.path.realpath(parent), name)
    if parent not in folders:
        folders[parent] = os.path.realpath(parent)
    return os.path.join(folders[parent], name)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class Record:
    roots: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)


def read_record(out: Path) -> Record:
    """What OUT/graded_from.json says; an empty Record where it is missing or is not what the batch writes."""
    try:
        data = json.loads(read_bounded(out / RECORD, RECORD_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return Record()
    if not isinstance(data, dict):
        return Record()
    roots, files = data.get("roots"), data.get("files")
    roots = tuple(r for r in roots if isinstance(r, str)) if isinstance(roots, list) else ()
    files = {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str) and _a_name(k)} \
        if isinstance(files, dict) else {}
    return Record(roots, files)


def _a_name(name: str) -> bool:
    """A submission name as discover.submission_name makes them: one folder in OUT, never a path out of it."""
    return 0 < len(name) <= NAME_LIMIT + 20 and name not in (".", "..") and re.fullmatch(r"[A-Za-z0-9._-]+", name) \
        is not None


def _graded_file(out: Path, name: str) -> str | None:
    """The file OUT/<name>/results.json says it graded (absolute, from this folder), or None."""
    try:
        data = json.loads(read_bounded(out / name / RESULTS, RESULTS_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    path = data.get("submission_path") if isinstance(data, dict) else None
    return where(Path(path)) if isinstance(path, str) and path else None


def _folders(paths: Iterable[Path]) -> list[str]:
    return [os.path.realpath(p) for p in paths if _is_folder(p)]


def name_submissions(paths: list[Path], out: Path) -> list[Submission]:
    """The submissions under `paths` (but not under `out`), named as this module's docstring says: unique in the
    batch, a file graded into `out` before under the name it had, and no name that holds another file's result."""
    record = read_record(out)
    files = find_submissions(paths, exclude=[out])
    resolved: dict[str, str] = {}
    absolute = [where(f, resolved) for f in files]
    try:
        present = set(os.listdir(out))
    except OSError:
        present = set()
    roots = [Path(r) for r in dict.fromkeys([*record.roots, *_folders(paths)])]
    known = {file: name for name, file in record.files.items()}
    names = unique_names(files, [known.get(a) or submission_name(Path(a), roots) for a in absolute])
    taken = set(names) | set(record.files)
    for i, (name, file) in enumerate(zip(names, absolute)):
        holder = record.files.get(name) or (_graded_file(out, name) if name in present else None)
        if holder is None or holder == file:
            continue
        stem, dot, suffix = name.rpartition(".")
        stem, suffix = (stem, dot + suffix) if dot else (name, "")
        number = 2
        while f"{stem}-{number}{suffix}" in taken or os.path.lexists(out / f"{stem}-{number}{suffix}"):
            number += 1
        names[i] = f"{stem}-{number}{suffix}"
        taken.add(names[i])
    # its place below the class folder it was found in, as its name reads it (discover.place_of: whose, and for
    # which assignment), whatever part of the class this command grades
    return [Submission(path, name, relative_parts(Path(a), roots)) for path, name, a in zip(files, names, absolute)]


def remember(out: Path, paths: list[Path], submissions: Iterable[Submission]) -> None:
    """Adds this batch's class folders and its files' names to OUT/graded_from.json (atomically)."""
    record = read_record(out)
    roots = list(dict.fromkeys([*record.roots, *_folders(paths)]))
    resolved: dict[str, str] = {}
    files = {**record.files, **{s.name: where(s.path, resolved) for s in submissions}}
    write_atomically(out / RECORD, json_text({"roots": roots, "files": files}))
