"""Reading a graded folder (the `--out` of `autograder grade`) and deciding whose each submission is.

Whose (`identify`): only the one name the LMS (or the teacher) set says whose (`intake/discover.place_of`):
the first folder under the graded folder (under an assignment's folder there, `03_residual_add/`, where the
class is laid out per assignment), or, only where there is no such folder, the file's own name. Whatever
lies below a student's folder is that student's, whatever the student called it: a file or folder of Ada's
named like Bob's Canvas download or Moodle folder is Ada's. The path below the graded folder is read back
from the file's recorded path, as the name the batch gave it proves (`discover.found_as`). That name, in order:

1. Named the way an LMS names its "download all submissions" archive's folders (a folder), or its files
   (a file, where there is no folder):
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
2. Any other folder is the student's (`class/ada/week1/01_residual_add.ipynb` -> `ada`).
3. A loose file, to its name without the exercise number and id (`data_trap_ada.py` -> `ada`), and without
   the `-2` that a resubmission or a name collision adds (`data_trap_ada-2.py` -> `ada`).
4. A file whose name is only the exercise (`01_residual_add.ipynb`, named on the command line from a student's
   own folder), to the folder it was in.

So one student stays one row whatever their downloads were called: on time, late or handed in again.

results.json files are read with `files.read_bounded` (never through a link, never from a FIFO, never more
than `RESULTS_LIMIT` bytes) and `Result.from_json`; one that cannot be read or is not the grader's is skipped
and reported (with the field that gave it away), the others still make the report.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePath

from ..core.result import Result
from ..core.status import Status
from ..exercises import EXERCISES
from ..feedback.wording import say
from ..intake.discover import found_as, place_of, safe_part
from ..intake.files import RefusedFile, read_bounded, write_atomically

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
    override: Override | None = None  # the teacher's score, set by hand (its `result` already holds it)
    graded_score: float | None = None  # where overridden, the score grading gave

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
    """The LMS's name for a folder (Moodle's) or a file (Canvas's or Moodle's). Where a file's name reads both
    ways, the LMS's prefix is the one that ends first: what follows it is the student's own file name."""
    moodle = MOODLE_NAME.match(part)
    if moodle and not (moodle.group("file") or is_folder):
        moodle = None
    canvas = None if is_folder else CANVAS_NAME.match(part)
    if canvas and (moodle is None or canvas.end("name") < moodle.end("name")):
        return Identity(canvas.group("name"), "canvas", canvas.group("user"), late=bool(canvas.group("late")))
    if moodle:
        name = moodle.group("name")
        name = name.replace("_", " ") if safe_name else name  # the safe name's `_` was a space
        return Identity(name.strip(), "moodle", moodle.group("participant"))
    return None


def identify(result: Result) -> Identity:
    """Whose a results.json is, by the rules in this module's docstring: from the one name the LMS (or the
    teacher) set, discover.place_of's owner, never from a name the student chose below it."""
    name = result.submission
    path = result.source.path if result.source else None  # text, where there is one (Result.from_json checks it)
    parts = found_as(path, name) if path else None
    safe_name = parts is None  # an older results.json: the safe name's parts, whose `_` may have been a space
    if parts is None:
        parts = tuple(name.split("__"))
        if len(parts) == 1 and path:  # a loose file: its name as it was found (spaces kept)
            parts, safe_name = (PurePath(path).name,), False
    place = place_of(parts, EXERCISES)
    found = _lms_identity(place.owner, place.in_folder, safe_name) if place.owner else None
    if found is not None and found.student:
        return found
    if place.in_folder:
        return Identity(safe_part(place.owner))  # a folder's name as it is: `group-2` is not a resubmission of `group`
    stem = PurePath(safe_part(place.owner)).stem
    exercise = result.exercise
    left = re.sub(rf"(\d+[_-]?)?{re.escape(exercise)}", "", stem) if exercise else stem
    left = _without_resubmission(left.strip("_-. ")).strip("_-. ")
    if left:
        return Identity(left)
    return Identity((PurePath(path).parent.name if path else "") or UNKNOWN_STUDENT)


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


# ---- scores set by hand: OUT/overrides.csv ----------------------------------------------------------------

OVERRIDES = "overrides.csv"
"""The teacher's file in the graded folder: a score set by hand per student and exercise, which outlives any
regrading (`grade --drop-overrides` drops those of the submissions it grades)."""
OVERRIDE_FIELDS = ("student", "exercise", "score", "reason")
OVERRIDES_LIMIT = 5_000_000


@dataclass(frozen=True)
class Override:
    student: str
    exercise: str
    score: float
    reason: str
    line: int  # in overrides.csv, for the teacher's messages


def _key(student: str, exercise: str) -> tuple[str, str]:
    """`Ada Lovelace` and `ada_lovelace` are one student; the exercise id is compared as written."""
    return re.sub(r"[\W_]+", "", student.casefold()), exercise.strip()


def _override_rows(folder: Path) -> tuple[list[dict[str, str]], list[str]]:
    path = folder / OVERRIDES
    try:
        text = read_bounded(path, OVERRIDES_LIMIT).decode("utf-8-sig")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as e:
        return [], [say("reports: overrides not read", file=path, why=e)]
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    if not set(OVERRIDE_FIELDS) <= set(header):
        return [], [say("reports: overrides columns", file=path, needed=", ".join(OVERRIDE_FIELDS),
                        found=", ".join(header) or "none")]
    try:
        return [{(k or "").strip(): (v if isinstance(v, str) else "") for k, v in row.items()} for row in reader], []
    except csv.Error as e:
        return [], [say("reports: overrides not read", file=path, why=e)]


def read_overrides(folder: Path) -> tuple[list[Override], list[str]]:
    """FOLDER/overrides.csv's rows (columns student, exercise, score, reason; others ignored), and a line for the
    teacher per row not applied (a score that is not a number of 0 or more) or the file not read."""
    rows, warnings = _override_rows(folder)
    found: dict[tuple[str, str], Override] = {}
    for line, row in enumerate(rows, start=2):
        try:
            score = float(row["score"])
        except ValueError:
            score = math.nan
        if not math.isfinite(score) or score < 0:
            warnings.append(say("reports: override bad score", file=folder / OVERRIDES, line=line,
                                score=repr(row["score"][:40])))
            continue
        override = Override(row["student"].strip(), row["exercise"].strip(), score, row["reason"].strip(), line)
        found[_key(override.student, override.exercise)] = override  # a later row of the same pair wins
    return list(found.values()), warnings


def overridden(result: Result, override: Override) -> Result:
    """`result` with the teacher's score. Its status says what grading found, but for a grader error, which the
    teacher's score settles (it counts then as passed or failed, by the score)."""
    status = result.status
    if status == Status.GRADER_ERROR:
        status = Status.PASSED if override.score >= result.max_score > 0 else Status.FAILED
    return replace(result, score=override.score, status=status)


def _apply(folder: Path, keyed: Sequence[tuple[tuple[str, ...], Result]]) -> tuple[list[Result | None], list[str]]:
    overrides, warnings = read_overrides(folder)
    by_key = {_key(o.student, o.exercise): o for o in overrides}
    used: set[tuple[str, str]] = set()
    out: list[Result | None] = []
    for students, result in keyed:
        hit = next((k for k in (_key(s, result.exercise) for s in students) if k in by_key), None)
        if hit is None:
            out.append(None)
            continue
        used.add(hit)
        out.append(overridden(result, by_key[hit]))
    warnings += [say("reports: override matches nothing", file=folder / OVERRIDES, line=o.line, student=o.student,
                     exercise=o.exercise) for k, o in by_key.items() if k not in used]
    return out, warnings


def overridden_results(folder: Path, results: list[Result]) -> tuple[list[Result], list[str]]:
    """`results` (the batch's gradebook rows) with FOLDER/overrides.csv applied, by student (student_of) and
    exercise; and the teacher's warnings (read_overrides's, and a row that matches no result)."""
    changed, warnings = _apply(folder, [((student_of(r),), r) for r in results])
    return [c or r for c, r in zip(changed, results)], warnings


def with_overrides(folder: Path, graded: list[Graded]) -> tuple[list[Graded], list[str]]:
    """`graded` with FOLDER/overrides.csv applied (the student as scan named them, or as identify does, before a
    name shared by two LMS users took its id), and the teacher's warnings."""
    keyed = [((g.student, identify(g.result).student), g.result) for g in graded]
    changed, warnings = _apply(folder, keyed)
    overrides = {_key(o.student, o.exercise): o for o in read_overrides(folder)[0]}
    out = []
    for g, c in zip(graded, changed):
        if c is None:
            out.append(g)
            continue
        o = next(overrides[k] for k in (_key(s, g.exercise) for s in (g.student, identify(g.result).student))
                 if k in overrides)
        out.append(replace(g, result=c, override=o, graded_score=g.result.score))
    return out, warnings


def drop_overrides(folder: Path, graded_now: Iterable[Result]) -> list[str]:
    """Removes from FOLDER/overrides.csv (atomically) the rows of the students and exercises of `graded_now`;
    returns a line per row dropped. The file's other rows and columns stay as they were."""
    rows, warnings = _override_rows(folder)
    if warnings or not rows:
        return warnings
    regraded = {_key(student_of(r), r.exercise) for r in graded_now}
    kept = [row for row in rows if _key(row["student"], row["exercise"]) not in regraded]
    if len(kept) == len(rows):
        return []
    buffer = io.StringIO()
    fields = list(dict.fromkeys([*OVERRIDE_FIELDS, *rows[0]]))
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in kept:
        writer.writerow({k: row.get(k, "") for k in fields})  # the teacher's own text, as they wrote it
    write_atomically(folder / OVERRIDES, buffer.getvalue(), 0o644)
    return [say("reports: override dropped", file=folder / OVERRIDES, student=row["student"], exercise=row["exercise"],
                score=row["score"], reason=row["reason"]) for row in rows if row not in kept]
