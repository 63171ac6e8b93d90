"""HTML feedback from a graded folder: a page per submission and a class overview, readable offline.

Pure functions of the results.json files (and, for the culprit lines, of the submitted file when it is
still the one graded); nothing is re-graded. Everything that came from a submission is escaped by jinja2's
autoescape; the pages run no script at all.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

import jinja2

from ..exercises import EXERCISES
from ..files import RefusedFile, read_bounded, write_atomically
from ..result import STATUSES
from ..submission import MAX_BYTES as MAX_SUBMISSION_BYTES
from ..submission import SubmissionError, answer_code
from . import plots
from .graded import Graded, load
from .lms import Gradebook, gradebook, gradebook_csv
from .templates import BASE, OVERVIEW, SUBMISSION

CULPRIT_PATTERNS = (
    re.compile(r"at line (\d+) of your answer"),
    re.compile(r"The line that broke autograd: `[^`]*` at line (\d+)"),
    re.compile(r"syntax error at line (\d+)"),
)
"""How the grader's feedback (feedback.py, grade.py) names a line of the student's answer."""
TOP_CHECKS = 15

_ENV = jinja2.Environment(
    loader=jinja2.DictLoader({"base.html": BASE, "submission.html": SUBMISSION, "overview.html": OVERVIEW}),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def culprit_lines(text: str) -> list[int]:
    """The answer lines a piece of feedback points at, in order, without repeats."""
    found = [int(m.group(1)) for pattern in CULPRIT_PATTERNS for m in pattern.finditer(text)]
    return sorted(set(found), key=found.index)


def answer_lines(data: dict) -> list[str] | None:
    """The graded answer code, line by line, if the submitted file is still there and unchanged."""
    path = data.get("submission_path")
    if not path:
        return None
    try:
        raw = read_bounded(path, MAX_SUBMISSION_BYTES)  # never follows a link, never blocks on a FIFO
        if hashlib.sha256(raw).hexdigest() != data.get("submission_sha256"):
            return None  # changed since grading: its line numbers would not match the feedback
        return answer_code(path).code.splitlines()
    except (OSError, SubmissionError, ValueError, RefusedFile):
        return None


def page_name(graded: Graded) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", graded.folder) + ".html"


def _num(x: object) -> str:
    return f"{float(x or 0):g}"  # type: ignore[arg-type]


def submission_page(graded: Graded, code_lines: list[str] | None = None) -> str:
    """The report a student reads: every check, what to fix, and the culprit lines in their answer."""
    data = graded.data
    tests, culprits = [], set()
    for t in data.get("tests", []):
        lines = culprit_lines(str(t.get("output", ""))) if t.get("status") == "failed" else []
        culprits.update(lines)
        hidden = t.get("visibility") != "visible"
        tests.append({
            "name": t.get("name", ""), "status": t.get("status", ""), "hidden": hidden,
            "score": _num(t.get("score")), "max_score": _num(t.get("max_score")),
            "description": "" if hidden else t.get("description", ""),  # hidden: pass/fail and message only
            "output": t.get("output", ""), "lines": lines,
        })
    culprits.update(culprit_lines(str(data.get("output", ""))))
    exercise = EXERCISES.get(graded.exercise)
    return _ENV.get_template("submission.html").render(
        title=f"{exercise.number}. {exercise.title}" if exercise else graded.exercise,
        exercise=graded.exercise, student=graded.student, submission=data.get("submission", graded.folder),
        status=data.get("status", ""), score=_num(data.get("score")), max_score=_num(data.get("max_score")),
        output=data.get("output", ""), tests=tests, culprits=culprits, code_lines=code_lines or [],
    )


def _per_exercise(graded: list[Graded], exercises: tuple[str, ...]) -> list[dict]:
    rows = []
    for e in exercises:
        mine = [g.data for g in graded if g.exercise == e and g.data.get("status") != "grader_error"]
        scores = [float(d.get("score", 0)) for d in mine]
        rows.append({
            "exercise": e, "count": len(mine),
            "mean": f"{sum(scores) / len(scores):.1f}" if scores else "—",
            "max": _num(EXERCISES[e].max_score if e in EXERCISES else max((d.get("max_score", 0) for d in mine),
                                                                           default=0)),
            "statuses": Counter(str(g.data.get("status")) for g in graded if g.exercise == e),
        })
    return rows


def failing_counts(graded: list[Graded]) -> list[tuple[str, int]]:
    """(exercise: check, submissions failing it), most common first. Only submissions that ran and failed
    some checks count: an untouched or unreadable file fails every check and says nothing about which."""
    counts = Counter(f"{g.exercise}: {t.get('name')}" for g in graded if g.data.get("status") == "failed"
                     for t in g.data.get("tests", []) if t.get("status") == "failed")
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def overview_page(graded: list[Graded], book: Gradebook, pages: dict[str, str]) -> str:
    """The teacher's page: statuses and means per exercise, two plots, the gradebook linking every report."""
    by_cell: dict[tuple[str, str], list[Graded]] = {}
    for g in graded:
        by_cell.setdefault((g.student, g.exercise), []).append(g)
    rows = []
    for student, _cells, total in book.rows:
        cells = [{"links": [{"href": f"submissions/{pages[g.folder]}", "status": g.data.get("status", ""),
                             "score": _num(g.data.get("score"))} for g in by_cell.get((student, e), [])]}
                 for e in book.exercises]
        rows.append({"student": student, "cells": cells, "total": _num(total)})
    scores = {e: [float(g.data.get("score", 0)) for g in graded
                  if g.exercise == e and g.data.get("status") != "grader_error"] for e in book.exercises}
    max_scores = {e: EXERCISES[e].max_score for e in book.exercises if e in EXERCISES}
    present = {str(g.data.get("status")) for g in graded}
    return _ENV.get_template("overview.html").render(
        n_submissions=len(graded), n_students=len(book.rows), exercises=book.exercises,
        grader_errors=[g.folder for g in graded if g.data.get("status") == "grader_error"],
        statuses=[s for s in STATUSES if s in present], per_exercise=_per_exercise(graded, book.exercises),
        score_plot=plots.score_distribution(scores, max_scores),
        checks_plot=plots.failing_checks(failing_counts(graded), TOP_CHECKS), top=TOP_CHECKS,
        rows=rows, max_total=_num(book.max_total),
    )


def write_report(graded_dir: Path, out: Path) -> dict[str, Path]:
    """Writes OUT/index.html, OUT/submissions/<submission>.html and OUT/gradebook_lms.csv, atomically."""
    graded = load(graded_dir)
    book = gradebook(graded)
    pages = {g.folder: page_name(g) for g in graded}
    for g in graded:
        write_atomically(out / "submissions" / pages[g.folder], submission_page(g, answer_lines(g.data)))
    write_atomically(out / "gradebook_lms.csv", gradebook_csv(book))
    write_atomically(out / "index.html", overview_page(graded, book, pages))
    return {"index": out / "index.html", "gradebook": out / "gradebook_lms.csv", "submissions": out / "submissions"}
