"""Gradebooks: one row per student, one column per exercise, for a spreadsheet and for an LMS to import.

A cell holds the score of the student's submission for the exercise: of several files, the one the LMS's
names say was handed in last (Canvas: late after on time, handed in again after the first), and where nothing
orders them (two notebooks of one exercise in a student's folder), none: the cell is `malformed`, with a
reason naming the files, for the teacher to keep one (`Cell.counted`). It is empty, never 0, where there is
no submission. Where the grader itself failed on one of the
student's submissions of the exercise (`grader_error`), the cell is visibly not a number and the student's
total is not summed: a total that silently skipped a grader error would look like a grade.

Three files:

- `gradebook_lms.csv` (always): `student, <exercise ids in course order>, total`, for a spreadsheet. A grader
  error reads `grader_error` in its cell and in the total.
- `gradebook_canvas.csv` (with a Canvas roster): Canvas's gradebook import format. Canvas's importer
  (instructure/canvas-lms app/models/gradebook_importer.rb) wants a header whose first column contains
  `Student` and second `ID`, then `SIS User ID` and `SIS Login ID` (or `SIS Login ID` alone), ending with
  `Section`; it finds a student by `ID` first, then by SIS ids, then by name. A column titled
  `Name (123)` updates assignment 123, a column it cannot match creates a new assignment, and only the
  columns it knows as computed (`Current Score`, `Final Score`, ...) are ignored: a `total` column would
  become a new assignment counted in the total a second time, so none is written. A row whose first cell
  contains `Points Possible` gives the points of new assignments (and is copied from the roster for the
  existing ones; where Canvas's points differ from the exercise's, scores are scaled to them and the
  teacher told). Canvas's importer takes an empty cell or `-` as no score (`no_score?`), and its grade
  parsing makes no score of `-` (assignment.rb `interpret_grade`); a grader error is written `-`. The roster
  is Canvas's own gradebook export (Grades > Export > Export Entire Gradebook), whose identity columns are
  copied as they are. See also Canvas's guide "How do I import grades in the Gradebook?"
  (community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807).
- `gradebook_moodle.csv` (with a Moodle roster): Moodle's CSV grade import reads the format of its own
  export (docs.moodle.org Grade_import: "The import file format is the same as the corresponding export
  format"; Grade administration > Export > Plain text file gives `First name, Last name, ID number,
  Institution, Department, Email address, <grade items>, Course total, Last downloaded from this course`).
  On import the teacher maps `Email address` to `useremail` (or `ID number` to `useridnumber`) and each
  exercise column to its grade item; a `Course total` column would have to be set to "Ignore", so none is
  written, nor `Last downloaded from this course` (whose date check refuses exports older than a year).
  Moodle's importer (grade/import/csv/classes/load_data.php) takes `''` or `-` as no grade and aborts the
  whole import on any other text or on a row whose user it cannot find: every row is a roster row, and a
  grader error is written `-`.

Both LMS files have one row per roster student, in the roster's order: a student with no submission is
there with empty cells. Submissions whose student is not on the roster, and names that match several
roster students, are left out of them and reported (`roster.RosterJoin`). Reading a roster and joining it to
the gradebook's rows is roster.py's.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePath
from typing import TYPE_CHECKING

from ..core.result import Cause, Result
from ..core.status import Status
from ..exercises import EXERCISES
from ..feedback.wording import say
from ..intake.files import csv_cell
from .graded import CANVAS_NAME, RESUBMITTED, Graded

if TYPE_CHECKING:
    from .roster import Roster, RosterJoin

MISSING = "missing"
"""A cell's status where the student handed nothing in; otherwise a cell's status is its submissions' Status."""
LMS_NO_GRADE = "-"
"""What a grader error reads in the LMS files: not a number, and `no score` to both Canvas and Moodle."""


@dataclass(frozen=True)
class Cell:
    """One student's submissions of one exercise, and the one that counts (`counted`: the latest, never the best)."""

    submissions: tuple[Graded, ...] = ()

    @cached_property
    def status(self) -> Status | str:
        counted = self.counted
        if counted is None:
            return MISSING
        if any(g.status == Status.GRADER_ERROR for g in self.submissions):
            return Status.GRADER_ERROR
        return counted.status

    @cached_property
    def counted(self) -> Graded | None:
        """The submission whose score counts; None where missing. Of several files, the latest where the LMS's
        names order them (lms_order), else none: a `malformed` verdict naming them (never the best of several
        guesses)."""
        scored = [g for g in self.submissions if g.status != Status.GRADER_ERROR]
        if len(scored) <= 1:
            return scored[0] if scored else self.submissions[-1] if self.submissions else None
        order = [lms_order(g) for g in scored]
        if None not in order and len({(g.lms, g.lms_id) for g in scored}) == 1:
            return max(zip(order, range(len(scored)), scored))[2]
        return several_files(scored)

    @property
    def score(self) -> float | None:
        """None where there is no submission or a grader error: never a default 0."""
        counted = self.counted
        return None if counted is None or self.status == Status.GRADER_ERROR else counted.score


def lms_order(graded: Graded) -> tuple[bool, int, int] | None:
    """When a Canvas download says a file was handed in, as (late, handed in again N times, submission id): a
    late file after those on time, `-2` after `-1` after none, then the later id; None for a file no LMS
    ordered (two files in one student's folder, Moodle's files)."""
    path = graded.result.source.path if graded.result.source and graded.result.source.path else ""
    m = CANVAS_NAME.match(PurePath(path).name if path else graded.result.submission.rsplit("__", 1)[-1])
    if graded.lms != "canvas" or m is None:
        return None
    again = RESUBMITTED.search(m.group("file"))
    return bool(m.group("late")), int(again.group("n")) if again else 0, int(m.group("submission"))


def several_files(scored: list[Graded]) -> Graded:
    """The verdict of a student's several files of one exercise that nothing orders: malformed, naming them."""
    first = scored[0]
    files = ", ".join(g.result.submission or g.folder for g in scored)
    why = say("reports: several files", count=len(scored), exercise=first.exercise, files=files)
    result = Result(first.exercise, "", Status.MALFORMED, 0.0, first.result.max_score, why, causes=(Cause(why),))
    return Graded("", first.student, result, first.lms, first.lms_id)


@dataclass(frozen=True)
class Row:
    student: str
    cells: dict[str, Cell]
    lms: str = ""
    lms_id: str = ""

    def cell(self, exercise: str) -> Cell:
        return self.cells.get(exercise) or Cell()

    @property
    def grader_errors(self) -> list[str]:
        return [e for e, c in self.cells.items() if c.status == Status.GRADER_ERROR]

    @property
    def total(self) -> float | None:
        """The sum of the scores; None where a cell is a grader error (the total is not known)."""
        if self.grader_errors:
            return None
        return sum(c.score or 0.0 for c in self.cells.values())


@dataclass(frozen=True)
class Gradebook:
    exercises: tuple[str, ...]
    rows: tuple[Row, ...]
    max_scores: dict[str, float] = field(default_factory=dict)

    @property
    def max_total(self) -> float:
        return sum(self.max_scores.values())

    def row(self, student: str) -> Row | None:
        return next((r for r in self.rows if r.student == student), None)


def _max_score(exercise: str, graded: list[Graded]) -> float:
    if exercise in EXERCISES:
        return float(EXERCISES[exercise].max_score)
    return max((float(g.result.max_score) for g in graded), default=0.0)


def gradebook(graded: list[Graded]) -> Gradebook:
    present = {g.exercise for g in graded}
    exercises = tuple(e for e in EXERCISES if e in present) + tuple(sorted(present - set(EXERCISES)))
    by_student: dict[str, dict[str, list[Graded]]] = {}
    ids: dict[str, tuple[str, str]] = {}
    for g in graded:
        by_student.setdefault(g.student, {}).setdefault(g.exercise, []).append(g)
        if g.lms_id:
            ids[g.student] = (g.lms, g.lms_id)
    rows = tuple(Row(student, {e: Cell(tuple(subs)) for e, subs in cells.items()}, *ids.get(student, ("", "")))
                 for student, cells in sorted(by_student.items()))
    maxima = {e: _max_score(e, [g for g in graded if g.exercise == e]) for e in exercises}
    return Gradebook(exercises, rows, maxima)


def number(x: float) -> str:
    """A score as a gradebook writes it: at most two decimals, no trailing zeros."""
    return f"{round(x, 2):g}"


def norm(text: str) -> str:
    """Lower-case letters and digits only: `Lovelace, Ada` -> `lovelaceada`, `residual_add` -> `residualadd`.
    The key a student's name, a roster's id and an LMS column's title are compared by."""
    return re.sub(r"[\W_]+", "", str(text).casefold())


def student_gradebook_csv(book: Gradebook, also: list[str] | tuple[str, ...] = ()) -> str:
    """gradebook_lms.csv, one row per student: the header `student, <exercise ids in course order>, total`;
    `also` adds rows with empty cells (roster students without a submission). Text cells through csv_cell (no
    formulas: a student or exercise named `=HYPERLINK(...)` stays text)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *map(csv_cell, book.exercises), "total"])
    for row in book.rows:
        cells = []
        for e in book.exercises:
            cell = row.cell(e)
            cells.append(Status.GRADER_ERROR.value if cell.status == Status.GRADER_ERROR else
                         "" if cell.score is None else number(cell.score))
        total = row.total
        writer.writerow([csv_cell(row.student), *cells, Status.GRADER_ERROR.value if total is None else number(total)])
    for student in also:
        writer.writerow([csv_cell(student), *("" for _ in book.exercises), ""])
    return buffer.getvalue()


# ---- the LMS's import files -------------------------------------------------------------------------------


def _column_title(roster: Roster, header: str) -> str:
    if roster.lms == "canvas":
        return re.sub(r"\s*\(\d+\)\s*$", "", header)  # `Residual add (4411)`: the assignment's id
    title = re.sub(r"^[^:]+:\s*", "", header)  # `Assignment: Residual add (Real)`: module, display type
    return re.sub(r"\s*\((Real|Percentage|Letter)[^)]*\)\s*$", "", title, flags=re.IGNORECASE)


def _names_of(exercise: str) -> set[str]:
    ex = EXERCISES.get(exercise)
    names = {exercise}
    if ex is not None:
        names |= {f"{ex.number:02d}_{ex.id}", f"{ex.number}_{ex.id}", ex.title, f"{ex.number:02d} {ex.title}",
                  f"{ex.number}. {ex.title}", f"{ex.number:02d} {ex.id}"}
    return {norm(n) for n in names if norm(n)}


def new_column(exercise: str) -> str:
    ex = EXERCISES.get(exercise)
    return f"{ex.number:02d}_{ex.id}" if ex else exercise


@dataclass(frozen=True)
class Column:
    exercise: str
    header: str  # the LMS's own column where one matched the exercise, else a new one
    existing: bool
    points: float  # what a full score is worth in the LMS (Canvas's Points Possible), else the exercise's


def columns(book: Gradebook, roster: Roster) -> tuple[list[Column], list[str]]:
    """A column per exercise, reusing the roster's column of the same name (so the LMS updates that
    assignment instead of creating one), and notes for the teacher."""
    out, notes = [], []
    for e in book.exercises:
        maximum = book.max_scores.get(e, 0.0)
        hits = [c for c in roster.grade_columns if norm(_column_title(roster, c)) in _names_of(e)]
        if not hits:
            out.append(Column(e, new_column(e), False, maximum))
            notes.append(say("reports: new column canvas", exercise=e, column=new_column(e)) if roster.lms == "canvas"
                         else say("reports: new column moodle", exercise=e, column=new_column(e)))
            continue
        if len(hits) > 1:
            notes.append(say("reports: several columns", exercise=e, columns=", ".join(hits), column=hits[0]))
        points = maximum
        if roster.lms == "canvas":
            try:
                lms_points = float(roster.points_possible.get(hits[0], ""))
                if math.isfinite(lms_points) and lms_points > 0:
                    points = lms_points
            except ValueError:
                pass
            if maximum and points != maximum:
                notes.append(say("reports: points scaled", exercise=e, column=hits[0], lms_points=number(points),
                                 points=number(maximum)))
        out.append(Column(e, hits[0], True, points))
    return out, notes


def _lms_cell(row: Row | None, column: Column, maximum: float) -> str:
    if row is None:
        return ""
    cell = row.cell(column.exercise)
    if cell.status == Status.GRADER_ERROR:
        return LMS_NO_GRADE
    if cell.score is None:
        return ""
    scale = column.points / maximum if maximum and column.points != maximum else 1.0
    return number(cell.score * scale)


def lms_csv(book: Gradebook, joined: RosterJoin) -> tuple[str, list[str]]:
    """The roster's import file (Canvas or Moodle, as the roster is) and notes for the teacher."""
    roster = joined.roster
    cols, notes = columns(book, roster)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*map(csv_cell, roster.identity), *(csv_cell(c.header) for c in cols)])
    if roster.lms == "canvas":
        writer.writerow(["Points Possible", *("" for _ in roster.identity[1:]),
                         *(roster.points_possible.get(c.header, "") or number(c.points) if c.existing
                           else number(c.points) for c in cols)])
    for s in roster.students:
        row = joined.matched.get(s.index)
        writer.writerow([*(csv_cell(s.cells.get(c, "")) for c in roster.identity),
                         *(_lms_cell(row, c, book.max_scores.get(c.exercise, 0.0)) for c in cols)])
    return buffer.getvalue(), notes


def lms_file_name(roster: Roster) -> str:
    return f"gradebook_{roster.lms}.csv"
