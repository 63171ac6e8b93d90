"""HTML feedback from a graded folder, readable offline, for a teacher with a class of any size.

What `write_report` writes into OUT:

- `index.html`, the class overview: counts, a status legend, who needs attention (untouched, crashed,
  unreadable, tampered-with submissions, a check failed in every exercise), missing submissions (against
  the roster when there is one), per-exercise statistics, score histograms stacked by status, the most
  common failing checks. No per-student table: that is what the next three pages are.
- `by_name.html`, `by_score.html`, `by_status.html`: the gradebook, one row per student, sorted three ways
  (the pages carry no script, so each order is a page of its own).
- `students/<student>.html`: one page per student covering all their exercises.
- `submissions/<submission>.html`: one page per submission (a student's superseded ones included).
- `gradebook_lms.csv`, and with a roster `gradebook_canvas.csv` or `gradebook_moodle.csv` (lms.py).

and, with `for_students`, a folder per student holding only their own page (`DIR/<student>/index.html`):
nothing about classmates, nothing only a teacher should see (the grader's traceback, submission names
and paths, tampering flags).

A failing submission's root cause (an error that several checks hit) is shown once, at the top of its
page; each check then says in which scenario it met it. Pure functions of the results.json files (and,
for the culprit lines, of the submitted file when it is still the one graded); nothing is re-graded.
Everything that came from a submission is escaped by jinja2's autoescape; the pages run no script at all.
Files are written atomically and readable by the group and others (0644), for a web server or a share.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from ..evidence import label as trial_label
from ..exercises import EXERCISES
from ..files import RefusedFile, read_bounded, write_atomically
from ..outcome import Trial
from ..result import Result
from ..status import Status
from ..submission import MAX_BYTES as MAX_SUBMISSION_BYTES
from ..submission import SubmissionError, answer_code
from . import plots
from .graded import Graded, ReportError, scan
from .lms import (
    MISSING,
    Gradebook,
    Join,
    Row,
    gradebook,
    join,
    lms_csv,
    lms_file_name,
    number,
    read_roster,
    student_gradebook_csv,
)
from .templates import BASE, MACROS, OVERVIEW, STUDENT, SUBMISSION, TABLE

TOP_CHECKS = 10
FILE_MODE = 0o644
"""Reports are for others to read (a teaching assistant, a web server): not mkstemp's 0600."""

CODES = {Status.PASSED: "P", Status.FAILED: "F", Status.NOT_ATTEMPTED: "NA", Status.TIMED_OUT: "TO",
         Status.CRASHED: "CR", Status.MALFORMED: "MF", Status.GRADER_ERROR: "GE", MISSING: "–"}
LABELS = {Status.PASSED: "passed", Status.FAILED: "failed", Status.NOT_ATTEMPTED: "not attempted",
          Status.TIMED_OUT: "timed out", Status.CRASHED: "crashed", Status.MALFORMED: "malformed",
          Status.GRADER_ERROR: "grader error", MISSING: "no submission"}
MEANINGS = {
    Status.PASSED: "full marks.",
    Status.FAILED: "the code ran; some checks failed.",
    Status.NOT_ATTEMPTED: "the answer still raises NotImplementedError.",
    Status.TIMED_OUT: "stopped when its time was up.",
    Status.CRASHED: "the process died or exited before reporting, or sent a report that did not come from the "
                    "grader's harness.",
    Status.MALFORMED: "could not be read: invalid notebook, no answer cells, empty, a syntax error, not a file.",
    Status.GRADER_ERROR: "the grader itself failed: not the student's fault, no score yet; regrade.",
    MISSING: "nothing handed in for the exercise.",
}
LEGEND = (*Status, MISSING)
SEVERITY = (Status.GRADER_ERROR, Status.CRASHED, Status.TIMED_OUT, Status.MALFORMED, Status.NOT_ATTEMPTED, MISSING,
            Status.FAILED, Status.PASSED)
"""Worst first: the order of `by_status.html`."""
RAN = (Status.FAILED, Status.PASSED)
"""A submission whose checks ran: which of them failed says something."""

_ENV = jinja2.Environment(
    loader=jinja2.DictLoader({"base.html": BASE, "macros.html": MACROS, "submission.html": SUBMISSION,
                              "student.html": STUDENT, "overview.html": OVERVIEW, "table.html": TABLE}),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
_ENV.globals.update(codes=CODES, labels=LABELS, meanings=MEANINGS)


def answer_lines(result: Result) -> list[str] | None:
    """The graded answer code, line by line, if the submitted file is still there and unchanged."""
    path = result.extra.get("submission_path")
    if not path:
        return None
    try:
        raw = read_bounded(path, MAX_SUBMISSION_BYTES)  # never follows a link, never blocks on a FIFO
        if hashlib.sha256(raw).hexdigest() != result.extra.get("submission_sha256"):
            return None  # changed since grading: its line numbers would not match the feedback
        return answer_code(path).code.splitlines()
    except (OSError, SubmissionError, ValueError, RefusedFile):
        return None


def _safe(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip(".") or "_"
    if len(name) > 80:
        name = name[:66] + "-" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return name


def page_name(graded: Graded) -> str:
    return _safe(graded.folder) + ".html"


def student_pages(students: list[str]) -> dict[str, str]:
    """A file name per student, safe and unique (`Ada Lovelace` -> `Ada_Lovelace`, `../x` -> `x`)."""
    taken: set[str] = set()
    out = {}
    for student in sorted(students):
        base = _safe(student)
        name, n = base, 2
        while name.casefold() in taken or name.casefold() in ("index", "students", "submissions"):
            name, n = f"{base}-{n}", n + 1
        taken.add(name.casefold())
        out[student] = name
    return out


# ---- one submission -----------------------------------------------------------------------------------------

@dataclass
class Feedback:
    summary: str
    cause: list[str] = field(default_factory=list)
    cause_checks: int = 0
    cause_lines: list[int] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)


def root_cause(result: Result) -> Feedback:
    """The submission's feedback with the errors that several failed checks met (Result.causes) taken out, to
    be shown once, at the top; each of those checks then says only in a few words where it met one."""
    failed = [t for t in result.tests if t.status == Status.FAILED]
    met = Counter(t.cause for t in failed if t.cause is not None)
    shared = [i for i in sorted(met) if met[i] >= 2]
    tests = []
    for t in result.tests:
        same = t.status == Status.FAILED and t.cause in shared
        where = trial_label(Trial.from_key(t.trial)) if t.trial else ""
        tests.append({"output": "" if same else t.output, "same_cause": same,
                      "contexts": [" — ".join(x for x in (t.brief.rstrip("."), where) if x)] if same else [],
                      "lines": list(result.causes[t.cause].lines) if t.cause is not None and not same else []})
    summary = result.output
    for i in shared:
        summary = summary.replace(result.causes[i].text, "")
    lines = [n for i in shared for n in result.causes[i].lines]
    return Feedback(summary.strip(), [result.causes[i].text for i in shared], sum(met[i] for i in shared),
                    list(dict.fromkeys(lines)), tests)


def tampering(result: Result) -> bool:
    """Whether the grader flagged the submission for tampering: it changed the grader or torch, or forged the
    worker's report (result.Cause.tampered)."""
    return result.tampered


def submission_view(graded: Graded, code_lines: list[str] | None, teacher: bool) -> dict:
    """What a page shows of one submission; `teacher=False` leaves out what only a teacher should see."""
    result = graded.result
    feedback = root_cause(result)
    cause_lines = feedback.cause_lines
    tests, culprits = [], set(cause_lines)
    for t, shown in zip(result.tests, feedback.tests):
        culprits.update(shown["lines"])
        hidden = t.visibility != "visible"
        tests.append({
            "name": t.name, "status": t.status, "hidden": hidden, "score": number(t.score),
            "max_score": number(t.max_score),
            "description": "" if hidden else t.description,  # hidden: pass/fail and message only
            **shown, "lines": [n for n in shown["lines"] if n not in cause_lines],
        })
    culprits.update(n for c in result.causes for n in c.lines if not c.tampered)
    status = result.status
    summary = feedback.summary
    if status == Status.GRADER_ERROR and not teacher:
        summary = "Internal grading error: not your fault, and your teacher has been told. No score was given yet."
    exercise = EXERCISES.get(graded.exercise)
    return {
        "exercise": graded.exercise, "title": f"{exercise.number}. {exercise.title}" if exercise else graded.exercise,
        "submission": result.submission or graded.folder, "status": status, "late": graded.late,
        "score": number(result.score), "max_score": number(result.max_score), "summary": summary,
        "cause": feedback.cause, "cause_checks": feedback.cause_checks, "cause_lines": cause_lines,
        "tests": tests, "culprits": culprits, "code_lines": code_lines or [],
        "path": result.extra.get("submission_path", "") if teacher else "",
        "traceback": result.extra.get("grader_traceback", "") if teacher else "",
        "flags": ["tampering: the grader caught this code changing the grader or torch, or forging its report"]
        if teacher and tampering(result) else [],
    }


def submission_page(graded: Graded, code_lines: list[str] | None = None, student_page: str | None = None) -> str:
    """The teacher's page of one submission: every check, what to fix, the culprit lines in the answer."""
    return _ENV.get_template("submission.html").render(
        s=submission_view(graded, code_lines, teacher=True), student=graded.student,
        student_page=(student_page or _safe(graded.student)) + ".html")


# ---- one student ------------------------------------------------------------------------------------------


def student_page(row: Row, book: Gradebook, pages: dict[str, str], teacher: bool, code: dict[str, list[str] | None],
                 attention: tuple[str, ...] | list[str] = (), roster_name: str = "") -> str:
    """A student's page: all exercises, each with its counted submission's feedback. `teacher=False` is the
    page handed to the student: no links out of it, nothing about others, nothing only a teacher sees."""
    exercises = []
    for e in book.exercises:
        cell = row.cell(e)
        counted = cell.counted
        ex = EXERCISES.get(e)
        exercises.append({
            "anchor": _anchor(e), "title": f"{ex.number}. {ex.title}" if ex else e, "status": cell.status,
            "score": "—" if cell.score is None else number(cell.score), "max_score": number(book.max_scores.get(e, 0)),
            "late": bool(counted and counted.late),
            "submission": submission_view(counted, code.get(counted.folder), teacher) if counted else None,
            "others": [{"submission": g.result.submission or g.folder, "page": pages[g.folder],
                        "status": g.status, "score": number(g.score), "late": g.late}
                       for g in cell.submissions if g is not counted],
        })
    total = row.total
    return _ENV.get_template("student.html").render(
        student=row.student, teacher=teacher, exercises=exercises, attention=list(attention) if teacher else [],
        roster_name=roster_name if teacher else "", grader_error=total is None,
        total="—" if total is None else number(total), max_total=number(book.max_total))


def _anchor(exercise: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", exercise)


# ---- the class --------------------------------------------------------------------------------------------


def failing_counts(graded: list[Graded]) -> list[tuple[str, int]]:
    """(exercise: check, submissions failing it), most common first. Only submissions that ran and failed
    some checks count: an untouched or unreadable file fails every check and says nothing about which."""
    counts = Counter(f"{g.exercise}: {t.name}" for g in graded if g.status == Status.FAILED
                     for t in g.result.tests if t.status == Status.FAILED)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _failed_checks(g: Graded) -> set[str]:
    return {t.name for t in g.result.tests if t.status == Status.FAILED}


def _checks(g: Graded) -> set[str]:
    return {t.name for t in g.result.tests}


def _exercise_list(exercises: list[str], book: Gradebook) -> str:
    if len(exercises) == len(book.exercises) and len(exercises) > 1:
        return "all"
    return ", ".join(f"#{EXERCISES[e].number}" if e in EXERCISES else e for e in exercises)


ATTENTION = (  # (key, label, why)
    ("tampering", "Flagged as tampering", "a check failed because the code changed the grader or torch, or the "
     "process sent a report of its own"),
    (Status.CRASHED, "Crashed", "the process died or exited before reporting"),
    (Status.TIMED_OUT, "Timed out", "stopped when its time was up"),
    (Status.MALFORMED, "Unreadable (malformed)", "invalid notebook, no answer cells, empty, a syntax error"),
    (Status.NOT_ATTEMPTED, "Not attempted", "handed in the exercise untouched"),
    ("same_check", "Failing the same check everywhere", "the same check failed in every exercise they ran "
     "that has it (two or more)"),
)


def student_attention(row: Row, book: Gradebook) -> dict[str, str]:
    """Why a student needs attention: reason key -> the exercises or checks concerned."""
    found: dict[str, list[str]] = {}
    for e in book.exercises:
        cell = row.cell(e)
        if any(tampering(g.result) for g in cell.submissions):
            found.setdefault("tampering", []).append(e)
        if cell.status in (Status.CRASHED, Status.TIMED_OUT, Status.MALFORMED, Status.NOT_ATTEMPTED):
            found.setdefault(cell.status, []).append(e)
    reasons = {k: _exercise_list(v, book) for k, v in found.items()}
    ran = [c.counted for c in row.cells.values() if c.counted and c.status in RAN]
    names = set().union(*(_checks(g) for g in ran)) if ran else set()
    everywhere = []
    for name in sorted(names):
        having = [g for g in ran if name in _checks(g)]
        if len(having) >= 2 and all(name in _failed_checks(g) for g in having):
            everywhere.append(f"“{name}” in {len(having)}")
    if everywhere:
        reasons["same_check"] = ", ".join(everywhere)
    return reasons


@dataclass
class ClassReport:
    graded: list[Graded]
    book: Gradebook
    joined: Join | None
    pages: dict[str, str]  # submission folder -> its page
    students: dict[str, str]  # student -> their page's name, without .html
    skipped: list[str]
    attention: dict[str, dict[str, str]]  # student -> reason -> detail


def _roster_names(joined: Join | None) -> list[str]:
    return [s.name for s in joined.missing] if joined else []


def overview_page(report: ClassReport, lms_file: str = "") -> str:
    """The teacher's page: what needs doing, then statistics and plots; the full table is on by_*.html."""
    book, graded, joined = report.book, report.graded, report.joined
    href = {s: f"students/{p}.html" for s, p in report.students.items()}
    attention = []
    for key, label, why in ATTENTION:
        entries = [{"name": s, "href": href[s], "detail": reasons[key]}
                   for s, reasons in sorted(report.attention.items()) if key in reasons]
        if entries:
            attention.append({"label": label, "why": why, "entries": entries})
    class_wide = _failed_by_all(graded)
    if class_wide:
        attention.append({"label": "Failed by every submission that ran", "why": "the exercise, its hints or the "
                          "check may need a look", "entries": [{"name": c, "href": "", "detail": ""} for c in class_wide]})
    missing_some = []
    for row in book.rows:
        gone = [e for e in book.exercises if row.cell(e).status == MISSING]
        if gone:
            missing_some.append({"name": row.student, "href": href[row.student], "detail": _exercise_list(gone, book)})
    per_exercise: list[dict[str, Any]] = []
    scores: dict[str, list[tuple[float, str]]] = {}
    for e in book.exercises:
        cells = [r.cell(e) for r in book.rows]
        scored = [c for c in cells if c.score is not None]
        counts = Counter(c.status for c in cells) + Counter({MISSING: len(_roster_names(joined))})
        per_exercise.append({
            "number": EXERCISES[e].number if e in EXERCISES else "", "exercise": e,
            "count": sum(len(c.submissions) for c in cells),
            "mean": f"{sum(c.score or 0.0 for c in scored) / len(scored):.1f}" if scored else "—",
            "max": number(book.max_scores.get(e, 0)), "statuses": +counts,
        })
        scores[e] = [(c.score or 0.0, c.status) for c in scored]
    present = {s for counted in per_exercise for s in counted["statuses"]}
    statuses = [s for s in LEGEND if s in present]
    roster = None
    if joined is not None:
        roster = {"n": len(joined.roster.students), "lms": joined.roster.lms.capitalize(), "file": lms_file,
                  "unmatched": [r.student for r in joined.unmatched],
                  "ambiguous": [(r.student, names) for r, names in joined.ambiguous]}
    titles = {e: f"{EXERCISES[e].number}. {e}" if e in EXERCISES else e for e in book.exercises}
    return _ENV.get_template("overview.html").render(
        n_submissions=len(graded), n_students=len(book.rows), exercises=book.exercises, roster=roster,
        grader_errors=[{"name": g.folder, "href": f"submissions/{report.pages[g.folder]}"}
                       for g in graded if g.status == Status.GRADER_ERROR],
        skipped=report.skipped, legend=[s for s in LEGEND if s in present or s in RAN],
        attention=attention, missing_all=_roster_names(joined), missing_some=missing_some,
        statuses=statuses, per_exercise=per_exercise,
        score_plot=plots.score_distribution(scores, book.max_scores, titles),
        checks_plot=plots.failing_checks(failing_counts(graded), TOP_CHECKS), top=TOP_CHECKS,
    )


def _failed_by_all(graded: list[Graded], at_least: int = 3) -> list[str]:
    """`exercise: check` for checks that every submission that ran (at least `at_least`) failed."""
    found = []
    by_exercise: dict[str, list[Graded]] = {}
    for g in graded:
        if g.status in RAN:
            by_exercise.setdefault(g.exercise, []).append(g)
    for e, ran in sorted(by_exercise.items()):
        if len(ran) >= at_least:
            found += [f"{e}: {name}" for name in sorted(set.intersection(*(_failed_checks(g) for g in ran)))]
    return found


ORDERS = {
    "by_name.html": "by name",
    "by_score.html": "by score, highest first",
    "by_status.html": "by status, worst first",
}


def table_page(report: ClassReport, page: str) -> str:
    """The gradebook, one row per student (roster students with no submission included), in one order."""
    book, joined = report.book, report.joined
    rows: list[tuple[Row, str]] = [(r, f"students/{report.students[r.student]}.html") for r in book.rows]
    rows += [(Row(name, {}), "") for name in _roster_names(joined)]

    def worst(row: Row) -> str:
        return min((row.cell(e).status for e in book.exercises), key=SEVERITY.index, default=MISSING)

    if page == "by_score.html":
        rows.sort(key=lambda item: (item[0].total is None, -(item[0].total or 0.0), item[0].student.casefold()))
    elif page == "by_status.html":
        rows.sort(key=lambda item: (SEVERITY.index(worst(item[0])), item[0].student.casefold()))
    else:
        rows.sort(key=lambda item: item[0].student.casefold())
    shown: list[dict[str, Any]] = []
    group = None
    counts = Counter(worst(r) for r, _ in rows)
    for row, href in rows:
        heading = ""
        if page == "by_status.html" and worst(row) != group:
            group = worst(row)
            heading = f"Worst status: {LABELS[group]} ({counts[group]} student{'s' if counts[group] != 1 else ''})"
        cells = []
        for e in book.exercises:
            cell = row.cell(e)
            counted = cell.counted
            cells.append({"status": cell.status, "late": bool(counted and counted.late),
                          "score": "" if cell.score is None else number(cell.score),
                          "href": f"{href}#ex-{_anchor(e)}" if href and cell.submissions else "",
                          "title": f"{e}: {LABELS[cell.status]}"})
        total = row.total
        shown.append({"student": row.student, "href": href, "cells": cells, "group": heading,
                      "total": Status.GRADER_ERROR.value if total is None else number(total) if row.cells else "—"})
    present = {c["status"] for r in shown for c in r["cells"]}
    exercises = [{"id": e, "label": str(EXERCISES[e].number) if e in EXERCISES else e} for e in book.exercises]
    return _ENV.get_template("table.html").render(
        order=ORDERS[page], page=page, rows=shown, exercises=exercises, max_total=number(book.max_total),
        legend=[s for s in LEGEND if s in present])


# ---- writing it all -----------------------------------------------------------------------------------------


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


ATTENTION_LABELS = dict((key, label) for key, label, _ in ATTENTION)


def write_report(graded_dir: Path, out: Path, roster: Path | None = None,
                 for_students: Path | None = None) -> dict:
    """Writes the teacher's report into OUT (see this module's docstring) and, with `for_students`, one folder
    per student holding only their page. Returns the paths written and `warnings` for the teacher."""
    graded, skipped = scan(graded_dir)
    if not graded:
        extra = f" ({len(skipped)} skipped: {skipped[0]})" if skipped else ""
        raise ReportError(f"no */results.json under {graded_dir}{extra}: grade first with "
                          f"`autograder grade ... --out {graded_dir}`")
    book = gradebook(graded)
    joined = join(book, read_roster(roster)) if roster is not None else None
    report = ClassReport(graded, book, joined, {g.folder: page_name(g) for g in graded},
                         student_pages([r.student for r in book.rows]), skipped,
                         {r.student: reasons for r in book.rows if (reasons := student_attention(r, book))})
    code = {g.folder: answer_lines(g.result) for g in graded}
    warnings = [f"skipped {line}" for line in skipped]
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
            files.write(out / "students" / f"{page_name_}.html",
                        student_page(row, book, report.pages, True, code, said,
                                     roster_student.name if roster_student else ""))
            if for_students is not None:
                files.write(for_students / page_name_ / "index.html", student_page(row, book, report.pages, False, code))
        files.write(paths["gradebook"], student_gradebook_csv(book, _roster_names(joined)))
        if joined is not None:
            text, notes = lms_csv(book, joined)
            lms_file = lms_file_name(joined.roster)
            paths["lms"] = files.write(out / lms_file, text)
            warnings += [f"{lms_file}: {note}" for note in notes]
            if joined.unmatched:
                warnings.append(f"{lms_file}: {len(joined.unmatched)} student(s) not on the roster, left out: "
                                + ", ".join(r.student for r in joined.unmatched))
            warnings += [f"{lms_file}: {row.student} matches several roster students ({' or '.join(names)}), left out"
                         for row, names in joined.ambiguous]
        for page in ORDERS:
            files.write(out / page, table_page(report, page))
    errors = [f"{r.student}/{e}" for r in book.rows for e in r.grader_errors]
    if errors:
        where = "grader_error in gradebook_lms.csv" + (f", '-' in {lms_file}" if lms_file else "")
        warnings.append(f"{len(errors)} grader error(s): no score, and no total for those students ({where}); "
                        "regrade them: " + ", ".join(errors))
    _write(paths["index"], overview_page(report, lms_file))  # last: it links to everything above
    return paths
