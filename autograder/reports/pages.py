"""The class report's pages, rendered from Results (templates/*.html, jinja2, autoescaped): a submission, a
student, the class overview and the gradebook sorted three ways. What only a teacher may see is left out of
what is handed to a student (`teacher=False`)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..core.result import Result
from ..core.status import Status
from ..exercises import EXERCISES
from ..feedback import language
from ..feedback.text import STATUS_NAMES
from ..feedback.wording import Said, exercise_text, say
from ..intake.files import RefusedFile, read_bounded
from ..intake.submission import MAX_BYTES as MAX_SUBMISSION_BYTES
from ..intake.submission import SubmissionError, answer_code
from . import plots
from .analysis import RAN, attention_reasons, exercise_list, failed_by_all, failing_counts, root_cause, tampering
from .gradebook import (
    MISSING,
    Gradebook,
    Row,
    number,
)
from .graded import Graded
from .roster import RosterJoin, roster_labels

TOP_CHECKS = 10


CODES = {Status.PASSED: "P", Status.FAILED: "F", Status.NOT_ATTEMPTED: "NA", Status.TIMED_OUT: "TO",
         Status.CRASHED: "CR", Status.MALFORMED: "MF", Status.GRADER_ERROR: "GE", MISSING: "–"}


LABELS = Said({**STATUS_NAMES.ids, MISSING: "reports: status missing"})


MEANINGS = Said({
    Status.PASSED: "reports: meaning passed",
    Status.FAILED: "reports: meaning failed",
    Status.NOT_ATTEMPTED: "reports: meaning not attempted",
    Status.TIMED_OUT: "reports: meaning timed out",
    Status.CRASHED: "reports: meaning crashed",
    Status.MALFORMED: "reports: meaning malformed",
    Status.GRADER_ERROR: "reports: meaning grader error",
    MISSING: "reports: meaning missing",
})


LEGEND = (*Status, MISSING)


SEVERITY = (Status.GRADER_ERROR, Status.CRASHED, Status.TIMED_OUT, Status.MALFORMED, Status.NOT_ATTEMPTED, MISSING,
            Status.FAILED, Status.PASSED)
"""Worst first: the order of `by_status.html`."""


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("autograder.reports", "templates"),  # reports/templates/*.html: package data
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
HTML_LANG = {"en": "en", "zh": "zh-CN"}
"""A language the course speaks -> its tag in `<html lang=...>`."""


def say_html(message_id: str, /, **fields: object) -> Markup:
    """`say` for a page: the sentence escaped, its fields that are markup already (a link, `<code>`, a chip,
    written in the template with `{% set %}`) kept as markup. The templates' `say`."""
    marks: dict[str, str] = {}
    plain: dict[str, object] = {}
    for key, value in fields.items():
        if isinstance(value, Markup):
            token = f"\ue000{len(marks)}\ue001"  # private-use characters: nothing translates or escapes them
            marks[token] = str(value)
            plain[key] = token
        else:
            plain[key] = value
    text = str(escape(say(message_id, **plain)))
    for token, markup in marks.items():
        text = text.replace(token, markup)
    return Markup(text)


def html_lang() -> str:
    """The page's language tag, for the language chosen now (language.chosen)."""
    return HTML_LANG.get(language.chosen(), "en")


_ENV.globals.update(codes=CODES, labels=LABELS, meanings=MEANINGS, say=say_html, html_lang=html_lang)


def answer_lines(result: Result) -> list[str] | None:
    """The graded answer code, line by line, if the submitted file is still there and unchanged."""
    path = result.source.path if result.source else None
    if not path:
        return None
    try:
        raw = read_bounded(path, MAX_SUBMISSION_BYTES)  # never follows a link, never blocks on a FIFO
        if result.source is None or hashlib.sha256(raw).hexdigest() != result.source.sha256:
            return None  # changed since grading: its line numbers would not match the feedback
        return answer_code(path).code.splitlines()
    except (OSError, SubmissionError, ValueError, RefusedFile):
        return None


# Names Windows refuses for a file or folder, whatever their extension (`nul.txt`), when a folder is unzipped.
WINDOWS_RESERVED = re.compile(r"(?i)(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?")
# A file name's UTF-8 bytes at most (file systems hold 255; a zip's reader and `.html` want room).
MAX_NAME_BYTES = 120


def _kept(c: str) -> bool:
    return unicodedata.category(c)[0] in "LMN" or c in "._-"  # letters (with their accents), digits, . _ -


def _safe(name: str) -> str:
    """A file or folder name for `name` that keeps its letters, in any script: NFC (a name typed on a Mac and
    one typed elsewhere are one name), anything but letters, marks, digits, `.`, `_` and `-` as `_` (no `/`,
    no control character, no `:` or `*` that Windows or a zip refuses; a run of them as one, none at either
    end), no leading or trailing `.`, no Windows device name (`CON`), and at most MAX_NAME_BYTES bytes, cut
    with a hash of the whole that keeps two long names apart (`Ada Lovelace` -> `Ada_Lovelace`, `Núñez José`
    -> `Núñez_José`, `../x` -> `x`)."""
    name = unicodedata.normalize("NFC", name)
    name = "".join(c if _kept(c) else "\0" for c in name)
    name = re.sub("\0+", "_", name.strip("\0.")) or "_"  # a run of what is not kept as one `_`
    if WINDOWS_RESERVED.fullmatch(name):
        name = "_" + name
    if len(name.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        while len(name.encode()) > MAX_NAME_BYTES - 13:
            name = name[:-1]
        name = name + "-" + digest
    return name


def page_name(graded: Graded) -> str:
    return _safe(graded.folder) + ".html"


def student_pages(students: list[str]) -> dict[str, str]:
    """A file name per student, safe (`_safe`) and unique: two students whose names differ only in case or in
    what `_safe` replaced (`Ada Lovelace`, `Ada_Lovelace`) get `-2` and so on, as a case-insensitive file
    system (macOS, Windows) or a zip unpacked there would otherwise make them one folder."""
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
        summary = say("reports: grader error for the student")
    if graded.override is not None:
        summary = (say("reports: overridden", score=number(graded.override.score), reason=graded.override.reason,
                       graded=number(graded.graded_score or 0.0), summary=summary) if teacher else
                   say("reports: overridden for the student", score=number(graded.override.score), summary=summary))
    exercise = EXERCISES.get(graded.exercise)
    return {
        "exercise": graded.exercise,
        "title": f"{exercise.number}. {exercise_text(exercise.title)}" if exercise else graded.exercise,
        "submission": result.submission or graded.folder, "status": status, "late": graded.late,
        "score": number(result.score), "max_score": number(result.max_score), "summary": summary,
        "cause": feedback.cause, "cause_checks": feedback.cause_checks, "cause_lines": cause_lines,
        "tests": tests, "culprits": culprits, "code_lines": code_lines or [],
        "path": (result.source.path or "" if result.source else "") if teacher else "",
        "traceback": (result.grader_traceback or "") if teacher else "",
        "flags": [say("reports: tampering flag")]
        if teacher and tampering(result) else [],
    }


def submission_page(graded: Graded, code_lines: list[str] | None = None, student_page: str | None = None) -> str:
    """The teacher's page of one submission: every check, what to fix, the culprit lines in the answer."""
    return _ENV.get_template("submission.html").render(
        s=submission_view(graded, code_lines, teacher=True), student=graded.student,
        student_page=(student_page or _safe(graded.student)) + ".html")


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
            "anchor": _anchor(e), "title": f"{ex.number}. {exercise_text(ex.title)}" if ex else e,
            "status": cell.status,
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


@dataclass
class ClassReport:
    graded: list[Graded]
    book: Gradebook
    joined: RosterJoin | None
    pages: dict[str, str]  # submission folder -> its page
    students: dict[str, str]  # student -> their page's name, without .html
    skipped: list[str]
    attention: dict[str, dict[str, str]]  # student -> reason -> detail
    undecided: list[Graded] = field(default_factory=list)  # files of no decided exercise (analysis.UNDECIDED)


def roster_names(joined: RosterJoin | None) -> list[str]:
    """The roster students with no submission, each labelled as roster.relabel labels those with one."""
    if joined is None:
        return []
    labels = roster_labels(joined.roster)
    return [labels.get(s.index, s.name) for s in joined.missing]


def overview_page(report: ClassReport, lms_file: str = "") -> str:
    """The teacher's page: what needs doing, then statistics and plots; the full table is on by_*.html."""
    book, graded, joined = report.book, report.graded, report.joined
    href = {s: f"students/{p}.html" for s, p in report.students.items()}
    attention = []
    for key, label, why in attention_reasons():
        entries = [{"name": s, "href": href[s], "detail": reasons[key]}
                   for s, reasons in sorted(report.attention.items()) if key in reasons]
        if entries:
            attention.append({"label": label, "why": why, "entries": entries})
    if report.undecided:
        entries = [{"name": g.result.submission or g.folder, "href": "", "detail": g.result.output}
                   for g in report.undecided]
        attention.insert(0, {"label": say("reports: attention undecided"),
                             "why": say("reports: attention undecided why"), "entries": entries})
    class_wide = failed_by_all(graded)
    if class_wide:
        attention.append({"label": say("reports: attention failed by all"),
                          "why": say("reports: attention failed by all why"),
                          "entries": [{"name": c, "href": "", "detail": ""} for c in class_wide]})
    missing_some = []
    for row in book.rows:
        gone = [e for e in book.exercises if row.cell(e).status == MISSING]
        if gone:
            missing_some.append({"name": row.student, "href": href[row.student], "detail": exercise_list(gone, book)})
    per_exercise: list[dict[str, Any]] = []
    scores: dict[str, list[tuple[float, str]]] = {}
    for e in book.exercises:
        cells = [r.cell(e) for r in book.rows]
        scored = [c for c in cells if c.score is not None]
        counts = Counter(c.status for c in cells) + Counter({MISSING: len(roster_names(joined))})
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
        attention=attention, missing_all=roster_names(joined), missing_some=missing_some,
        statuses=statuses, per_exercise=per_exercise,
        score_plot=plots.score_distribution(scores, book.max_scores, titles),
        checks_plot=plots.failing_checks(failing_counts(graded), TOP_CHECKS), top=TOP_CHECKS,
    )


ORDERS = {
    "by_name.html": say("reports: order by name"),
    "by_score.html": say("reports: order by score"),
    "by_status.html": say("reports: order by status"),
}


def table_page(report: ClassReport, page: str) -> str:
    """The gradebook, one row per student (roster students with no submission included), in one order."""
    book, joined = report.book, report.joined
    rows: list[tuple[Row, str]] = [(r, f"students/{report.students[r.student]}.html") for r in book.rows]
    rows += [(Row(name, {}), "") for name in roster_names(joined)]

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
            heading = say("reports: worst status group", status=LABELS[group], count=counts[group],
                          plural="s" if counts[group] != 1 else "")
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


