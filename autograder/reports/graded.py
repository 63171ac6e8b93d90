"""Reading a graded folder (the `--out` of `autograder grade`) and deciding whose each submission is.

Whose, in this order (`identify`):

1. A file in a folder named the way an LMS names its "download all submissions" archive's folders, else a
   file so named (the folder first: the LMS sets a folder's name, while a file's name ends with what the
   student called it, which may be a classmate's LMS-style name):
   - Canvas: `<name>_<user id>_<submission id>_<the student's file name>`, with `LATE_` before the user id
     for a late submission (`ada_12345_67890_01_residual_add.ipynb`, `ada_LATE_12345_67890_01_residual_add.ipynb`);
     a file the student handed in again keeps Canvas's `-1`, `-2`... before its extension
     (`ada_12345_67890_01_residual_add-1.ipynb`). The user id is the `ID` column of Canvas's gradebook
     export, so these join the roster exactly.
   - Moodle: `<full name>_<participant id>_assignsubmission_file_<the student's file name>`, or, with
     "Download submissions in folders" (the default since Moodle 3.1), the student's files inside a folder
     `<full name>_<participant id>_assignsubmission_file_` (moodle/moodle mod/assign/locallib.php,
     `download_submissions`: `str_replace('_', ' ', fullname($student))`, then
     `clean_filename($prefix . '_' . $this->get_uniqueid_for_user($userid))`, then
     `'_' . $subtype . '_' . $type . '_'`). Moodle writes a `_` of a name as a space. The participant id is
     the assignment's, not the user's: Moodle submissions join the roster by name.
2. A submission found in a sub-folder belongs to the first folder under the graded folder
   (`class/ada/01_residual_add.ipynb` -> `ada`).
3. A loose file, to its name without the exercise number and id (`data_trap_ada.py` -> `ada`), and without
   the `-2` that a resubmission or a name collision adds (`data_trap_ada-2.py` -> `ada`).
4. A file whose name is only the exercise (`01_residual_add.ipynb`, graded from a student's own folder), to
   the folder it was in.

So one student stays one row whatever their downloads were called: on time, late or handed in again.

results.json files are read with `files.read_bounded` (never through a link, never from a FIFO, never more
than `RESULTS_LIMIT` bytes) and `Result.from_json`; one that cannot be read or is not the grader's is skipped
and reported (with the field that gave it away), the others still make the report.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..core.result import Result
from ..core.status import Status
from ..feedback.wording import say
from ..intake.files import RefusedFile, read_bounded

UNKNOWN_STUDENT = "(unknown)"
RESULTS_LIMIT = 20_000_000
"""Bytes of one results.json read at most (the grader writes a few kB: outputs are bounded)."""

CANVAS_NAME = re.compile(r"^(?P<name>.+?)_(?P<late>LATE_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$")
MOODLE_NAME = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_[a-z]+(?:_(?P<file>.*))?$")
RESUBMITTED = re.compile(r"-(?P<n>\d+)(?P<ext>\.[A-Za-z0-9]+)?$")
"""Canvas's `-1` before the extension of a file handed in again; discover.py's `-2` for colliding names."""


class ReportError(Exception):
    """The report cannot be made (no graded folder, an unusable roster); the message says why."""


@dataclass(frozen=True)
class Identity:
    student: str
    lms: str = ""  # "canvas" or "moodle" where the file name came from an LMS download
    lms_id: str = ""  # Canvas: the user id (its gradebook's ID column); Moodle: the assignment's participant id
    late: bool = False


@dataclass(frozen=True)
class Graded:
    folder: str  # the submission's folder under the graded folder (its `submission` name)
    student: str
    result: Result  # its results.json, read back
    lms: str = ""
    lms_id: str = ""
    late: bool = False

    @property
    def exercise(self) -> str:
        return self.result.exercise

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def score(self) -> float:
        return self.result.score


def _lms_identity(part: str, is_folder: bool, safe_name: bool) -> Identity | None:
    m = MOODLE_NAME.match(part)
    if m and (m.group("file") or is_folder):
        name = m.group("name").replace("_", " ") if safe_name else m.group("name")  # the safe name's `_` was a space
        return Identity(name.strip(), "moodle", m.group("participant"))
    if is_folder:
        return None
    m = CANVAS_NAME.match(part)
    if m:
        return Identity(m.group("name"), "canvas", m.group("user"), late=bool(m.group("late")))
    return None


def identify(result: Result) -> Identity:
    """Whose a results.json is, by the rules in this module's docstring."""
    name = result.submission
    path = result.source.path if result.source else None  # text, where there is one (Result.from_json checks it)
    original = PurePath(path) if path else None
    # The LMS's names, from the file as it was found (spaces kept), else from the submission's safe name.
    parts = name.split("__")
    # The folder first: an LMS sets a folder's name, a student sets their file's (Ada may name hers after Bob).
    candidates = [(original.parent.name, True, False)] if original is not None else []
    candidates += [(parts[0], True, True)] if len(parts) > 1 else []
    candidates += [(original.name, False, False)] if original is not None else []
    candidates += [(parts[-1], False, True)]
    for part, is_folder, safe_name in candidates:
        found = _lms_identity(part, is_folder, safe_name) if part else None
        if found is not None and found.student:
            return found
    if len(parts) > 1:
        return Identity(parts[0])  # a folder's name as it is: `group-2` is not a resubmission of `group`
    stem = PurePath(name).stem
    exercise = result.exercise
    left = re.sub(rf"(\d+[_-]?)?{re.escape(exercise)}", "", stem) if exercise else stem
    left = _without_resubmission(left.strip("_-. ")).strip("_-. ")
    if left:
        return Identity(left)
    return Identity((original.parent.name if original else "") or UNKNOWN_STUDENT)


def _without_resubmission(text: str) -> str:
    return RESUBMITTED.sub(lambda m: m.group("ext") or "", text)


def student_of(result: Result) -> str:
    """The student a results.json belongs to, by the rules in this module's docstring."""
    return identify(result).student


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)  # a link to a folder is not followed
    except OSError:
        return False


def scan(folder: Path) -> tuple[list[Graded], list[str]]:
    """Every FOLDER/<submission>/results.json that reads as the grader's, sorted by student, exercise and
    submission; and a line per one skipped (a link, a FIFO, too large, not JSON, not the grader's)."""
    if not _is_folder(folder):
        raise ReportError(say("reports: not a graded folder", folder=folder))
    graded, skipped = [], []
    for child in sorted(folder.iterdir()):
        if not _is_folder(child):
            continue
        path = child / "results.json"
        try:
            data = json.loads(read_bounded(path, RESULTS_LIMIT).decode("utf-8"))
        except FileNotFoundError:
            continue  # not a submission's folder (the report's own, say)
        except (RefusedFile, OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
            skipped.append(say("reports: results not read", folder=child.name, why=e))
            continue
        try:
            result = Result.from_json(data)
        except ValueError as e:
            skipped.append(say("reports: results not the grader's", folder=child.name, why=e))
            continue
        who = identify(result)
        graded.append(Graded(child.name, who.student, result, who.lms, who.lms_id, who.late))
    return _disambiguate(graded), skipped


def _disambiguate(graded: list[Graded]) -> list[Graded]:
    """Two LMS users with the same name (two Canvas `smithjohn`s) stay two rows: their ids tell them apart."""
    ids: dict[str, set[str]] = {}
    for g in graded:
        if g.lms_id:
            ids.setdefault(g.student, set()).add(g.lms_id)
    out = [Graded(g.folder, f"{g.student} ({g.lms_id})", g.result, g.lms, g.lms_id, g.late)
           if g.lms_id and len(ids.get(g.student, ())) > 1 else g for g in graded]
    return sorted(out, key=lambda g: (g.student, g.exercise, g.folder))


def scan_some(folder: Path) -> tuple[list[Graded], list[str]]:
    """`scan`, refusing a folder with no graded submission (ReportError, saying what was skipped)."""
    graded, skipped = scan(folder)
    if not graded:
        extra = say("reports: nothing graded skipped", count=len(skipped), first=skipped[0]) if skipped else ""
        raise ReportError(say("reports: nothing graded", folder=folder, skipped=extra))
    return graded, skipped


def load(folder: Path) -> list[Graded]:
    """The graded submissions of `scan`; ReportError where there are none."""
    return scan_some(folder)[0]
