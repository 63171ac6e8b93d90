"""Who a submission belongs to comes from the LMS's structure alone (issue 29 §4).

For every layout discover.py and graded.py know (a folder per student; Canvas's flat download names; Moodle's
flat names and its folders; each of those inside a folder per assignment), and for every roster kind roster.py
reads (none, Canvas, Moodle), a class of three is graded and reported; then Ada hands in, in her own space, files
and folders named after her classmates (Bob's Canvas download name, his Moodle name, a folder named like Cleo's
Moodle folder or like Bob's own folder, a folder named like an assignment's with Bob's folder inside), some of
them perfect and one flagged as tampering. Nobody else's row may change: not in gradebook.csv, not in
gradebook_lms.csv, not in the LMS's import file, not in the overview's lists (needs attention, missing).

The results are written as `autograder grade` writes them (discover.named_submissions names the files, the
recorded path is the file's), without running the answers: who a file is is decided from its place alone.
"""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

import pytest

from autograder.batch import _record, write_gradebook
from autograder.core.result import Cause, Result, SubmittedFile
from autograder.core.status import Status
from autograder.feedback.wording import say
from autograder.intake.discover import named_submissions
from autograder.reports.html import write_report

ROOT = Path(__file__).resolve().parents[2]
ROSTERS = {"none": None, "canvas": ROOT / "samples" / "roster_canvas.csv",
           "moodle": ROOT / "samples" / "roster_moodle.csv"}
# The sample rosters' students: login, Canvas user id, Canvas's download name, Moodle's full name
STUDENTS = {"ada": ("1001", "lovelaceada", "Ada Lovelace"), "bob": ("1002", "babbagebob", "Bob Babbage"),
            "cleo": ("1003", "cleocleopatra", "Cleopatra Cleo")}
EXERCISE, FILE = "residual_add", "03_residual_add.ipynb"
ASSIGNMENT = "03_residual_add"  # a folder per assignment, as a teacher names it

LAYOUTS = ["folders", "canvas", "moodle_files", "moodle_folders", "assignment_folders", "assignment_canvas",
           "assignment_moodle_folders"]


def handed_in(layout: str, student: str, chosen: str) -> Path:
    """Where the LMS (or the teacher) puts a file `student` handed in as `chosen` (a path the student chose: in
    a layout without folders only its name survives, after the LMS's prefix)."""
    user, canvas, moodle = STUDENTS[student]
    number = {"ada": "11", "bob": "12", "cleo": "13"}[student]
    assignment = Path(ASSIGNMENT) if layout.startswith("assignment_") else Path()
    kind = layout.removeprefix("assignment_")
    if kind == "folders":
        return assignment / student / chosen
    if kind == "canvas":
        return assignment / f"{canvas}_{user}_5{user[1:]}_{Path(chosen).name}"
    if kind == "moodle_files":
        return assignment / f"{moodle}_{number}_assignsubmission_file_{Path(chosen).name}"
    return assignment / f"{moodle}_{number}_assignsubmission_file_" / chosen


# What Ada names her files after her classmates; each scores full marks, or is flagged as tampering
SPOOFS = {
    "babbagebob_1002_51002_03_residual_add.ipynb": "passed",  # Bob's Canvas download name
    "Bob Babbage_12_assignsubmission_file_03_residual_add.ipynb": "passed",  # Bob's Moodle file name
    "Cleopatra Cleo_13_assignsubmission_file_/03_residual_add.ipynb": "tampered",  # Cleo's Moodle folder
    "bob/03_residual_add.ipynb": "passed",  # Bob's own folder's name
    f"{ASSIGNMENT}/bob/03_residual_add.ipynb": "passed",  # an assignment's folder, Bob's inside
    "cleo__03_residual_add.ipynb": "tampered",  # the batch's own name for Cleo's file
}
BASELINE = {"ada": ("failed", 5.0), "bob": ("not_attempted", 0.0), "cleo": ("failed", 3.0)}


def result_for(how: str, score: float) -> Result:
    if how == "tampered":
        return Result(EXERCISE, "", Status.FAILED, 0.0, 10.0, "0/10 points.",
                      causes=(Cause("your code replaced parts of the grader", "TamperError", tampered=True),))
    return Result(EXERCISE, "", Status(how), score, 10.0, f"{score:g}/10 points.")


def grade(class_dir: Path, out: Path, outcome: dict[Path, tuple[str, float]]) -> None:
    """Writes results.json and gradebook.csv as `autograder grade class_dir --out out` does, each file's outcome
    given: only the names and paths come from the grader's own code."""
    results = []
    for submission in named_submissions([class_dir], exclude=[out]):
        how, score = outcome[submission.path.relative_to(class_dir)]
        made = result_for(how, score)
        results.append(_record(out, submission.name, Result(
            made.exercise, submission.name, made.status, made.score, made.max_score, made.output,
            causes=made.causes, source=SubmittedFile("0" * 64, str(submission.path)))))
    write_gradebook(out, results)


def make(layout: str, folder: Path, spoof: bool) -> dict[Path, tuple[str, float]]:
    class_dir = folder / "class"
    outcome = {}
    for student, (status, score) in BASELINE.items():
        outcome[handed_in(layout, student, FILE)] = (status, score)
    if spoof:
        flat = layout.removeprefix("assignment_") in ("canvas", "moodle_files")
        for chosen, how in SPOOFS.items():
            if flat and "/" in chosen:
                continue  # a layout without folders keeps only the file's name: the next spoofs cover it
            outcome[handed_in(layout, "ada", chosen)] = (how, 10.0)
    for path in outcome:
        (class_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (class_dir / path).write_text("{}")
    return outcome


def attention_lists(index: Path) -> dict[str, list[str]]:
    """The overview's lists: each "needs attention" group's entries and the missing students, as shown."""
    page = index.read_text(encoding="utf-8")
    lists: dict[str, list[str]] = {}
    for label, names in re.findall(r"<tr><td><strong>(.*?)</strong>.*?<td class=\"names\">(.*?)</td></tr>", page,
                                   re.S):
        lists[html.unescape(label)] = [html.unescape(re.sub(r"<[^>]+>", "", e)).strip() for e in names.split(", ")]
    for label, names in re.findall(r"<p><strong>(No submission at all|Some exercises missing)[^<]*</strong>\s*"
                                   r"<span class=\"names\">(.*?)</span>", page, re.S):
        lists[label] = [html.unescape(re.sub(r"<[^>]+>", "", e)).strip() for e in names.split(", ")]
    return lists


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def view(folder: Path, layout: str, roster: str, spoof: bool) -> dict:
    """What a teacher reads of the class: every file the grade and the report write that lists students."""
    class_dir, out = folder / "class", folder / "grades"
    grade(class_dir, out, make(layout, folder, spoof))
    paths = write_report(out, folder / "report", roster=ROSTERS[roster])
    return {"gradebook.csv": rows((out / "gradebook.csv").read_text()),
            "gradebook_lms.csv": rows(paths["gradebook"].read_text()),
            "lms": rows(paths["lms"].read_text()) if paths["lms"] else [],
            "lists": attention_lists(paths["index"])}


ADA = ("ada", "lovelace")  # in every name Ada goes by: her login, Canvas's name, Moodle's, the roster's


def adas(text: str) -> bool:
    return any(mark in text.casefold() for mark in ADA)


def others(seen: dict) -> dict:
    """What `seen` says of everyone but Ada: every row and list entry that does not name her."""
    shown: dict = {key: [r for r in seen[key] if not adas(",".join(r))]
                   for key in ("gradebook.csv", "gradebook_lms.csv", "lms")}
    lists = {label: sorted(e for e in entries if not adas(e)) for label, entries in seen["lists"].items()}
    shown["lists"] = {label: entries for label, entries in lists.items() if entries}
    return shown


@pytest.mark.parametrize("roster", list(ROSTERS))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_student_naming_files_after_classmates_changes_nobody_elses_row(tmp_path, layout, roster):
    honest = view(tmp_path / "honest", layout, roster, spoof=False)
    spoofed = view(tmp_path / "spoofed", layout, roster, spoof=True)
    before, after = others(honest), others(spoofed)
    for student in ("bob", "cleo"):  # there to compare: their rows, their files
        assert any(student in ",".join(r).casefold() or STUDENTS[student][2] in ",".join(r)
                   for r in before["gradebook_lms.csv"])
        assert any(student in r[0].casefold() for r in before["gradebook.csv"])
    assert roster == "none" or len(before["lms"]) > 2
    assert after == before
    # Ada's spoofs are hers: she is flagged for the tampering, nobody else is
    tampering = spoofed["lists"].get(say("reports: attention tampering"), [])
    assert tampering and all(adas(e) for e in tampering), tampering
    # Ada's several files of one exercise: where nothing the LMS wrote orders them (her folder), none counts,
    # never the best of them (her spoofs scored 10); the cell is malformed, under needs attention (Moodle keeps
    # one submission per student: several files in it are as unordered as in a folder)
    if layout.removeprefix("assignment_") != "canvas":  # Canvas orders its files: the latest counts
        (ada,) = [r for r in spoofed["gradebook_lms.csv"][1:] if adas(r[0])]
        assert ada[1:] == ["0", "0"], ada
        assert any(adas(e) for e in spoofed["lists"][say("reports: attention malformed")])
    # ... and the class still has three students
    assert len(spoofed["gradebook_lms.csv"]) == len(honest["gradebook_lms.csv"])
