"""HTML feedback from a graded folder, readable offline, for a teacher with a class of any size.

What `write_report` writes into OUT:

- `index.html`, the class overview: counts, a status legend, who needs attention (untouched, crashed,
  unreadable, tampered-with submissions, a check failed in every exercise), missing submissions (against
  the roster when there is one), per-exercise statistics, score histograms stacked by status, the most
  common failing checks. No per-student table: that is what the next three pages are.
- `by_name.html`, `by_score.html`, `by_status.html`: the gradebook, one row per student, sorted three ways
  (the pages carry no script, so each order is a page of its own).
- `students/<student>.html`: one page per student covering all their exercises; a student on the roster is
  named as the roster writes them (roster.relabel), and every file name keeps the letters of a name
  (`Núñez_José`, pages._safe).
- `submissions/<submission>.html`: one page per submission (a student's superseded ones included).
- `gradebook_lms.csv`, and with a roster `gradebook_canvas.csv` or `gradebook_moodle.csv` (gradebook.py; the
  roster read and joined by roster.py).

A file whose exercise the batch could not decide (exercise `unknown`, analysis.UNDECIDED) is listed under
"needs attention" with the reason, and nowhere else: no exercise, column, student page or missing entry.

And, with `for_students`, a folder per student holding only their own page (`DIR/<student>/index.html`):
nothing about classmates, nothing only a teacher should see (the grader's traceback, submission names
and paths, tampering flags).

A failing submission's root cause (an error that several checks hit) is shown once, at the top of its
page; each check then says in which scenario it met it. Pure functions of the results.json files (and,
for the culprit lines, of the submitted file when it is still the one graded); nothing is re-graded.
Everything that came from a submission is escaped by jinja2's autoescape; the pages run no script at all.
Files are written atomically and readable by the group and others (0644), for a web server or a share.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ..feedback.wording import say
from ..intake.files import write_atomically
from .analysis import ATTENTION_LABELS, student_attention, undecided
from .gradebook import (
    gradebook,
    lms_csv,
    lms_file_name,
    student_gradebook_csv,
)
from .graded import scan_some, with_overrides
from .pages import (
    ORDERS,
    ClassReport,
    answer_lines,
    overview_page,
    page_name,
    roster_names,
    student_page,
    student_pages,
    submission_page,
    table_page,
)
from .roster import join, read_roster, relabel

FILE_MODE = 0o644
"""Reports are for others to read (a teaching assistant, a web server): not mkstemp's 0600."""


def _write(path: Path, text: str) -> Path:
    write_atomically(path, text, FILE_MODE)
    return path


class _Writer:
    """Writes files atomically on a few threads: each write waits on its fsync, and fsyncs on threads of
    their own overlap (a class of 300 is 2,500 files: 10 s one after the other, under 2 s this way)."""

    def __init__(self, threads: int = 16):
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="report-write")
        self._futures: list[Future] = []

    def write(self, path: Path, text: str) -> Path:
        self._futures.append(self._pool.submit(_write, path, text))
        return path

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            for future in self._futures:
                future.result()  # the first failure (a full disk, say) is raised, after the others finished
        finally:
            self._pool.shutdown(wait=True)


def write_report(graded_dir: Path, out: Path, roster: Path | None = None,
                 for_students: Path | None = None) -> dict:
    """Writes the teacher's report into OUT (see this module's docstring) and, with `for_students`, one folder
    per student holding only their page. Returns the paths written and `warnings` for the teacher."""
    graded, skipped = scan_some(graded_dir)
    graded, override_warnings = with_overrides(graded_dir, graded)  # the teacher's scores set by hand
    graded, unsure = undecided(graded)  # files of no exercise the batch could tell: under "needs attention" only
    book = gradebook(graded)
    joined = join(book, read_roster(roster)) if roster is not None else None
    if joined is not None:
        graded, book, joined = relabel(graded, joined)  # by the roster's name, wherever it has the student
    report = ClassReport(graded, book, joined, {g.folder: page_name(g) for g in graded},
                         student_pages([r.student for r in book.rows]), skipped,
                         {r.student: reasons for r in book.rows if (reasons := student_attention(r, book))}, unsure)
    code = {g.folder: answer_lines(g.result) for g in graded}
    warnings = [say("reports: skipped", line=line) for line in skipped] + override_warnings
    paths: dict = {"index": out / "index.html", "gradebook": out / "gradebook_lms.csv",
                   "submissions": out / "submissions", "students": out / "students", "lms": None,
                   "views": [out / page for page in ORDERS], "for_students": for_students, "warnings": warnings}
    lms_file = ""
    with _Writer() as files:
        for g in graded:
            page = submission_page(g, code[g.folder], report.students[g.student])
            files.write(out / "submissions" / report.pages[g.folder], page)
        for row in book.rows:
            page_name_ = report.students[row.student]
            roster_student = joined.student_of(row.student) if joined else None
            said = [f"{ATTENTION_LABELS[k]}: {v}" for k, v in report.attention.get(row.student, {}).items()]
            roster_name = roster_student.name if roster_student and roster_student.name != row.student else ""
            files.write(out / "students" / f"{page_name_}.html",
                        student_page(row, book, report.pages, True, code, said, roster_name))
            if for_students is not None:
                files.write(for_students / page_name_ / "index.html",
                            student_page(row, book, report.pages, False, code))
        files.write(paths["gradebook"], student_gradebook_csv(book, roster_names(joined)))
        if joined is not None:
            text, notes = lms_csv(book, joined)
            lms_file = lms_file_name(joined.roster)
            paths["lms"] = files.write(out / lms_file, text)
            warnings += [say("reports: lms note", file=lms_file, note=note) for note in notes]
            if joined.unmatched:
                warnings.append(say("reports: not on the roster", file=lms_file, count=len(joined.unmatched),
                                    students=", ".join(r.student for r in joined.unmatched)))
            warnings += [say("reports: several roster students", file=lms_file, student=row.student,
                             names=" or ".join(names))
                         for row, names in joined.ambiguous]
        for page in ORDERS:
            files.write(out / page, table_page(report, page))
    if unsure:
        warnings.append(say("reports: undecided", count=len(unsure), index=paths["index"],
                            submissions=", ".join(g.result.submission or g.folder for g in unsure)))
    errors = [f"{r.student}/{e}" for r in book.rows for e in r.grader_errors]
    if errors:
        where = say("reports: grader errors where lms", file=lms_file) if lms_file else \
            say("reports: grader errors where")
        warnings.append(say("reports: grader errors", count=len(errors), where=where, submissions=", ".join(errors)))
    _write(paths["index"], overview_page(report, lms_file))  # last: it links to everything above
    return paths


