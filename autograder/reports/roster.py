"""Rosters: a Canvas gradebook export or a Moodle grades export read (`read_roster`), and a gradebook's rows
joined to the roster's students (`join`). The formats, and what the LMS files written for a roster hold, are
described in gradebook.py.

A row joins its roster student by Canvas user id where the file names carried one, then by SIS id, login,
email or ID number, then by name. Submissions whose student is not on the roster, and names that match several
roster students, are left out of the LMS file and reported (`RosterJoin`).

Once joined, a student is labelled by their name as the roster writes it (`relabel`), on every page, in
gradebook_lms.csv and in the folders handed back: not by the login or file name their submissions came
under (`ada`, `lovelaceada`), so one student is one name everywhere, accents and all.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ..feedback.wording import say
from ..intake.files import RefusedFile, read_bounded
from .gradebook import Cell, Gradebook, Row, gradebook, norm
from .graded import Graded, ReportError

ROSTER_LIMIT = 50_000_000


class RosterError(ReportError):
    """A roster this module cannot read; the message says what it expected."""


@dataclass(frozen=True)
class RosterStudent:
    index: int
    cells: dict[str, str]  # the roster's row, column -> text as the LMS wrote it
    name: str  # as the LMS shows it
    lms_id: str  # Canvas's ID column; "" for Moodle (its downloads carry no user id)
    ids: tuple[str, ...]  # normalised SIS ids, logins, emails and their local parts, ID numbers
    names: tuple[str, ...]  # normalised "first last" and "last first"


@dataclass(frozen=True)
class Roster:
    lms: str  # "canvas" or "moodle"
    header: tuple[str, ...]
    identity: tuple[str, ...]  # the columns that say who a row is, copied into the import file
    grade_columns: tuple[str, ...]  # the LMS's assignment (grade item) columns
    points_possible: dict[str, str]  # Canvas: column -> its "Points Possible" cell
    students: tuple[RosterStudent, ...]
    path: str = ""


CANVAS_COMPUTED = re.compile(r"(Current|Final|Unposted|Override)\s+(Score|Points|Grade|Status)|"
                             r"Assignments\s+(Current|Final)|Imported Assignments")
MOODLE_GRADE = re.compile(r"^(.+?:\s.+|Course total.*|Last downloaded from this course)$", re.IGNORECASE)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")  # Excel adds a byte-order mark
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")  # a roster saved by Excel on Windows


def _email_ids(value: str) -> list[str]:
    value = value.strip()
    return [norm(value), norm(value.split("@", 1)[0])] if "@" in value else [norm(value)]


def read_roster(path: Path) -> Roster:
    """A Canvas gradebook export or a Moodle grades export, recognised by its header."""
    try:
        text = _decode(read_bounded(path, ROSTER_LIMIT))
    except (RefusedFile, OSError) as e:
        raise RosterError(say("reports: roster unreadable", path=path, error=e)) from None
    rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        raise RosterError(say("reports: roster empty", path=path))
    header = tuple(c.strip() for c in rows[0])
    lower = [c.casefold() for c in header]
    if len(header) > 2 and "Student" in header[0] and header[1] == "ID" and any("Section" in c for c in header):
        return _canvas(header, rows[1:], str(path))
    if "first name" in lower and "email address" in lower:
        return _moodle(header, rows[1:], str(path))
    raise RosterError(say("reports: roster unknown", path=path, columns=", ".join(header[:8])))


def _canvas(header: tuple[str, ...], rows: list[list[str]], path: str) -> Roster:
    end = next(i for i, c in enumerate(header) if "Section" in c) + 1
    identity = header[:end]
    grades = tuple(c for c in header[end:] if c and not CANVAS_COMPUTED.search(c))
    points: dict[str, str] = {}
    students: list[RosterStudent] = []
    for row in rows:
        cells = {c: (row[i].strip() if i < len(row) else "") for i, c in enumerate(header)}
        first = cells[header[0]]
        if "Points Possible" in first:
            points = {c: cells[c] for c in grades}
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", v, re.IGNORECASE) for v in cells.values()):
            continue  # the row of muted (manually posted) assignments
        if first == "Student, Test" and not cells.get("SIS User ID") and not cells.get("SIS Login ID"):
            continue  # Canvas's Student View account
        ids = [norm(cells.get(c, "")) for c in ("SIS User ID", "Integration ID")]
        ids += _email_ids(cells.get("SIS Login ID", ""))
        last, _, given = first.partition(",")
        names = [norm(first), norm(f"{given} {last}")]
        students.append(RosterStudent(len(students), cells, first, cells["ID"], _clean(ids), _clean(names)))
    return Roster("canvas", header, identity, grades, points, tuple(students), path)


def _moodle(header: tuple[str, ...], rows: list[list[str]], path: str) -> Roster:
    end = next((i for i, c in enumerate(header) if MOODLE_GRADE.match(c)), len(header))
    identity = header[:end]
    grades = tuple(c for c in header[end:] if c and not re.match(r"(?i)course total|last downloaded|feedback:", c))
    lower = {c.casefold(): c for c in header}
    students: list[RosterStudent] = []
    for row in rows:
        cells = {c: (row[i].strip() if i < len(row) else "") for i, c in enumerate(header)}

        def get(*names: str, cells: dict[str, str] = cells) -> str:
            return next((cells[lower[n]] for n in names if n in lower), "")

        first, last = get("first name"), get("last name", "surname")
        ids = _email_ids(get("email address")) + [norm(get("id number")), norm(get("username"))]
        students.append(RosterStudent(len(students), cells, f"{first} {last}".strip(), "", _clean(ids),
                                      _clean([norm(f"{first} {last}"), norm(f"{last} {first}")])))
    return Roster("moodle", header, identity, grades, {}, tuple(students), path)


def _clean(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


@dataclass(frozen=True)
class RosterJoin:
    """The gradebook's rows against the roster's students."""

    roster: Roster
    matched: dict[int, Row]  # roster index -> the student's row (their rows merged, if several matched)
    index_of: dict[str, int]  # a gradebook row's student -> the roster index it joined
    unmatched: tuple[Row, ...]  # no roster student: left out of the LMS file
    ambiguous: tuple[tuple[Row, tuple[str, ...]], ...]  # several roster students: left out, with their names

    @property
    def missing(self) -> tuple[RosterStudent, ...]:
        """Roster students without a single submission."""
        return tuple(s for s in self.roster.students if s.index not in self.matched)

    def student_of(self, student: str) -> RosterStudent | None:
        index = self.index_of.get(student)
        return None if index is None else self.roster.students[index]


def _index(students: tuple[RosterStudent, ...], attr: str) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for s in students:
        for key in getattr(s, attr):
            found.setdefault(key, set()).add(s.index)
    return found


def join(book: Gradebook, roster: Roster) -> RosterJoin:
    """Each row to the roster student it belongs to: by Canvas user id where the file names carried one, then
    by SIS id, login, email or ID number, then by name; a key that fits several roster students decides
    nothing."""
    by_lms_id = {s.lms_id: s.index for s in roster.students if s.lms_id}
    by_id, by_name = _index(roster.students, "ids"), _index(roster.students, "names")
    found: dict[int, list[Row]] = {}
    unmatched, ambiguous = [], []
    for row in book.rows:
        index: int | None = None
        if roster.lms == "canvas" and row.lms == "canvas" and row.lms_id in by_lms_id:
            index = by_lms_id[row.lms_id]
        else:
            key = norm(row.student.rsplit(" (", 1)[0] if row.lms_id else row.student)
            hits = by_id.get(key) or by_name.get(key) or set()
            if len(hits) == 1:
                index = next(iter(hits))
            elif hits:
                ambiguous.append((row, tuple(roster.students[i].name for i in sorted(hits))))
                continue
        if index is None:
            unmatched.append(row)
        else:
            found.setdefault(index, []).append(row)
    index_of = {row.student: i for i, rows in found.items() for row in rows}
    return RosterJoin(roster, {i: _merge(rows) for i, rows in found.items()}, index_of, tuple(unmatched),
                tuple(ambiguous))


def _merge(rows: list[Row]) -> Row:
    """Rows of one roster student (a folder `ada` and a Moodle download `Ada Lovelace`) as one row."""
    if len(rows) == 1:
        return rows[0]
    cells: dict[str, list[Graded]] = {}
    for row in rows:
        for e, cell in row.cells.items():
            cells.setdefault(e, []).extend(cell.submissions)
    return Row(" + ".join(r.student for r in rows), {e: Cell(tuple(s)) for e, s in cells.items()},
               rows[0].lms, rows[0].lms_id)


def _label(s: RosterStudent) -> str:
    return next((s.cells[c] for c in ("SIS Login ID", "SIS User ID", "ID number", "Email address", "Username")
                 if s.cells.get(c)), s.lms_id or str(s.index + 1))


def roster_labels(roster: Roster) -> dict[int, str]:
    """A label per roster student (by index): their name as the roster writes it; where several share a name,
    with their login, SIS id, ID number or email after it (`Smith, John (jsmith)`) to keep them apart."""
    names = Counter(s.name for s in roster.students)
    return {s.index: s.name if names[s.name] == 1 else f"{s.name} ({_label(s)})"
            for s in roster.students if s.name}


def relabel(graded: list[Graded], joined: RosterJoin) -> tuple[list[Graded], Gradebook, RosterJoin]:
    """The graded submissions, their gradebook and the join, with each joined student labelled by their name on
    the roster (roster_labels): rows that joined one roster student become that student's one row. Students
    not on the roster, or matching several, keep the label their files gave them."""
    labels = roster_labels(joined.roster)
    taken = set(labels.values())
    new = {student: labels[i] for student, i in joined.index_of.items() if i in labels}
    for row in (*joined.unmatched, *(r for r, _ in joined.ambiguous)):
        if row.student in taken:  # a login that happens to be another student's roster name stays apart
            new[row.student] = f"{row.student} ({say('reports: not on the roster label')})"
    graded = [replace(g, student=new.get(g.student, g.student)) for g in graded]
    book = gradebook(graded)
    rows = {r.student: r for r in book.rows}
    matched = {i: rows[labels[i]] for i in joined.matched if i in labels and labels[i] in rows}
    matched.update({i: row for i, row in joined.matched.items() if i not in matched})
    return graded, book, RosterJoin(
        joined.roster, matched, {new.get(s, s): i for s, i in joined.index_of.items()},
        tuple(rows.get(new.get(r.student, r.student), r) for r in joined.unmatched),
        tuple((rows.get(new.get(r.student, r.student), r), names) for r, names in joined.ambiguous))
