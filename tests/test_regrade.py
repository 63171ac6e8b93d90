"""Grading again into the same --out folder (issue 35 §1): one student, one exercise, everyone; the teacher's
scores set by hand (OUT/overrides.csv) outlive it unless `--drop-overrides`; every export (gradebook.csv, the
report's gradebook_lms.csv and LMS import file, the class tables) holds each (student, exercise) exactly once,
with its latest result. And a student who names folders after a classmate cannot get that classmate's result
replaced. Through the real command line (`python -m autograder`), on notebooks of the sample class."""

from __future__ import annotations

import csv
import html
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.core.result import Result
from autograder.exercises import EXERCISES
from autograder.intake.out_folder import RECORD, name_submissions
from autograder.reports.graded import OVERRIDES, student_of
from tests.conftest import ROOT

SAMPLES = ROOT / "samples"
EXERCISE_FILES = {"residual_add": "03_residual_add.ipynb", "sliced_input": "05_sliced_input.ipynb"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_SALT"}
    done = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def grade(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return cli("grade", *args, "--out", "grades", "--jobs", "2", "--quiet", cwd=cwd)


def results(out: Path) -> dict[str, Result]:
    """Every results.json in OUT, by folder."""
    return {p.parent.name: Result.from_json(json.loads(p.read_text())) for p in sorted(out.glob("*/results.json"))}


def latest(out: Path) -> dict[tuple[str, str], Result]:
    """(student, exercise) -> its result in OUT; fails where a pair has two."""
    found: dict[tuple[str, str], Result] = {}
    for result in results(out).values():
        key = (student_of(result), result.exercise)
        assert key not in found, f"{key} graded twice: {found[key].submission}, {result.submission}"
        found[key] = result
    return found


class Table(HTMLParser):
    """The class table of a report page: a list of rows, each the cells' text (a cell's first text: its score)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(self._cell[0].strip() if self._cell else "")
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None and data.strip():
            self._cell.append(data)


def table(page: Path) -> dict[str, dict[str, str]]:
    parser = Table()
    parser.feed(page.read_text())
    exercises = [e for e in EXERCISES if e in EXERCISE_FILES]  # the columns, in course order
    rows = [r for r in parser.rows if r]
    students = [r[0] for r in rows]
    assert len(students) == len(set(students)), students  # a student once
    return {r[0]: dict(zip(exercises, r[1:-1])) for r in rows}


def number(x: float) -> str:
    return f"{round(x, 2):g}"


def check_every_export(root: Path, overrides: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Each (student, exercise) once in every export, with its latest result or the teacher's override; returns
    what counts, by (student, exercise)."""
    out = root / "grades"
    counted = {key: overrides.get(key, r.score) for key, r in latest(out).items()}
    by_folder = results(out)

    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert sorted(r["submission"] for r in rows) == sorted(by_folder)  # every result once, nothing else
    for row in rows:
        result = by_folder[row["submission"]]
        assert float(row["score"]) == counted[(student_of(result), result.exercise)], row

    cli("report", "grades", "--roster", str(SAMPLES / "roster_canvas.csv"), cwd=root)
    report = out / "report"
    with (SAMPLES / "roster_canvas.csv").open() as f:  # the report names a student as the roster does
        shown_as = {r["SIS Login ID"]: r["Student"] for r in csv.DictReader(f) if r["SIS Login ID"]}
    by_name = {(shown_as.get(s, s), e): score for (s, e), score in counted.items()}
    spreadsheet = list(csv.DictReader((report / "gradebook_lms.csv").open()))
    graded_students = sorted({s for s, _ in by_name})
    assert sorted(r["student"] for r in spreadsheet if any(r[e] for e in EXERCISE_FILES)) == graded_students
    for row in spreadsheet:
        for exercise in EXERCISE_FILES:
            want = by_name.get((row["student"], exercise))
            assert row[exercise] == ("" if want is None else number(want)), (row, exercise)

    with (report / "gradebook_canvas.csv").open() as f:
        canvas = list(csv.DictReader(f))
    logins = {r["SIS Login ID"]: r for r in canvas if r["SIS Login ID"]}
    assert len(logins) == len([r for r in canvas if r["SIS Login ID"]])  # a roster student once
    columns = {"residual_add": "03_residual_add (4411)", "sliced_input": "05_sliced_input (4413)"}
    for (student, exercise), score in counted.items():
        if student in logins:
            assert logins[student][columns[exercise]] == number(score), (student, exercise)

    for page in ("by_name.html", "by_score.html", "by_status.html"):
        shown = table(report / page)
        for (student, exercise), score in by_name.items():
            assert shown[student][exercise] == number(score), (page, student, exercise)
    pages = [p.read_text() for p in (report / "students").glob("*.html")]
    for (student, exercise), score in overrides.items():  # the student's page (the teacher's) says so, and why
        assert any(html.escape(shown_as.get(student, student)) in page and
                   f"Score set by hand to {number(score)}" in page for page in pages), (student, exercise)
    return counted


def replace_with(target: Path, source: Path) -> None:
    target.write_bytes(source.read_bytes())


@pytest.mark.slow
def test_grading_again_keeps_one_latest_result_per_student_and_exercise(tmp_path):
    root = tmp_path
    for student in ("ada", "bob", "cleo"):
        for file in EXERCISE_FILES.values():
            (root / "class" / student).mkdir(parents=True, exist_ok=True)
            shutil.copy(SAMPLES / "class" / student / file, root / "class" / student / file)
    # mallory's folder holds a folder named after bob: graded alone, it would be named as bob's result is
    (root / "class" / "mallory" / "bob").mkdir(parents=True)
    shutil.copy(SAMPLES / "class" / "frank" / EXERCISE_FILES["residual_add"],
                root / "class" / "mallory" / "bob" / EXERCISE_FILES["residual_add"])
    out = root / "grades"

    grade(root, "class")  # everyone
    first = latest(out)
    assert len(first) == 7 and first[("bob", "residual_add")].status == "not_attempted"
    check_every_export(root, {})

    # the teacher sets two scores by hand
    (out / OVERRIDES).write_text("student,exercise,score,reason\nbob,sliced_input,4,oral exam\n"
                                 "ada,residual_add,9,late\n")
    overrides = {("bob", "sliced_input"): 4.0, ("ada", "residual_add"): 9.0}

    # one student: bob sends his real notebook (eve's stands in for it); his folder is graded again
    replace_with(root / "class" / "bob" / EXERCISE_FILES["residual_add"],
                 SAMPLES / "class" / "eve" / EXERCISE_FILES["residual_add"])
    graded = grade(root, "class/bob")
    assert "2 submissions" in graded.stdout
    second = latest(out)
    assert second[("bob", "residual_add")].status == "passed"  # the grade changed
    assert second[("bob", "residual_add")].submission == first[("bob", "residual_add")].submission  # its own folder
    assert {k: r.submission for k, r in second.items()} == {k: r.submission for k, r in first.items()}
    check_every_export(root, overrides)

    # one exercise, everyone's, graded again (cleo's fixed meanwhile); the override of bob's sliced_input stays
    replace_with(root / "class" / "cleo" / EXERCISE_FILES["sliced_input"],
                 SAMPLES / "class" / "ada" / EXERCISE_FILES["sliced_input"])
    graded = grade(root, "class", "--only-exercise", "sliced_input", "--regrade")
    assert "3 submissions" in graded.stdout  # ada's, bob's, cleo's sliced_input: no other
    third = latest(out)
    assert third[("cleo", "sliced_input")].status == "passed" != first[("cleo", "sliced_input")].status
    assert third[("ada", "residual_add")].to_json() == second[("ada", "residual_add")].to_json()  # not regraded
    counted = check_every_export(root, overrides)
    assert counted[("bob", "sliced_input")] == 4.0 and counted[("ada", "residual_add")] == 9.0

    # mallory's folder graded alone: bob's result stays his (the file is named below the class, as at first)
    bob_bytes = (out / first[("bob", "residual_add")].submission / "results.json").read_bytes()
    grade(root, "class/mallory", "--regrade")
    assert (out / first[("bob", "residual_add")].submission / "results.json").read_bytes() == bob_bytes
    assert ("mallory", "residual_add") in latest(out)
    check_every_export(root, overrides)

    # ada graded again with --drop-overrides: her override goes, bob's stays
    dropped = grade(root, "class/ada", "--regrade", "--drop-overrides")
    assert "dropped the score set by hand for ada, residual_add" in dropped.stderr
    assert (out / OVERRIDES).read_text().splitlines() == ["student,exercise,score,reason",
                                                          "bob,sliced_input,4,oral exam"]
    counted = check_every_export(root, {("bob", "sliced_input"): 4.0})
    assert counted[("ada", "residual_add")] == 10.0


def test_a_student_cannot_name_files_into_a_classmates_result(tmp_path):
    """Names only, no grading: Mallory's `bob/` folder, graded alone, is named below the class as at first; and
    where the out folder cannot say so (a results.json of bob's file holds the name), another name is taken."""
    for path in ("class/bob/03_residual_add.ipynb", "class/mallory/bob/03_residual_add.ipynb"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("{}")
    out = tmp_path / "grades"
    everyone = {s.path.relative_to(tmp_path).as_posix(): s.name for s in name_submissions([tmp_path / "class"], out)}
    assert everyone == {"class/bob/03_residual_add.ipynb": "bob__03_residual_add.ipynb",
                        "class/mallory/bob/03_residual_add.ipynb": "mallory__bob__03_residual_add.ipynb"}
    # as a batch leaves it: bob's result, and the record of what was graded from where
    (out / "bob__03_residual_add.ipynb").mkdir(parents=True)
    (out / "bob__03_residual_add.ipynb" / "results.json").write_text(json.dumps(
        {"submission_path": str(tmp_path / "class/bob/03_residual_add.ipynb")}))
    (out / RECORD).write_text(json.dumps({"roots": [os.path.realpath(tmp_path / "class")], "files": {}}))
    (alone,) = name_submissions([tmp_path / "class" / "mallory"], out)
    assert alone.name == "mallory__bob__03_residual_add.ipynb"
    (out / RECORD).unlink()  # an out folder graded before the record: the results.json says whose the name is
    (alone,) = name_submissions([tmp_path / "class" / "mallory"], out)
    assert alone.name == "bob__03_residual_add-2.ipynb"
    (bob,) = name_submissions([tmp_path / "class" / "bob" / "03_residual_add.ipynb"], out)
    assert bob.name == "03_residual_add.ipynb"  # no record: named as before this record existed


def test_a_file_graded_before_keeps_its_name_whatever_path_names_it(tmp_path):
    (tmp_path / "class" / "ada").mkdir(parents=True)
    file = tmp_path / "class" / "ada" / "03_residual_add.ipynb"
    file.write_text("{}")
    out = tmp_path / "grades"
    out.mkdir()
    (out / RECORD).write_text(json.dumps({"roots": [os.path.realpath(tmp_path / "class")],
                                          "files": {"ada__03_residual_add.ipynb": str(file)}}))
    for given in (file, tmp_path / "class" / "ada", Path(os.path.relpath(file))):
        (found,) = name_submissions([given], out)
        assert found.name == "ada__03_residual_add.ipynb", given
    (out / RECORD).write_text("[not the record")  # not what the batch writes: as if there were none
    (found,) = name_submissions([file], out)
    assert found.name == "03_residual_add.ipynb"


def test_a_record_naming_a_path_out_of_the_folder_is_not_followed(tmp_path):
    """graded_from.json is the grader's, but read as anything else in --out is: a name in it that is not one
    folder (`../x`) is ignored, and the file is named as if the record did not say."""
    (tmp_path / "class" / "ada").mkdir(parents=True)
    file = tmp_path / "class" / "ada" / "03_residual_add.ipynb"
    file.write_text("{}")
    out = tmp_path / "grades"
    out.mkdir()
    (out / RECORD).write_text(json.dumps({"roots": [], "files": {"../escape": str(file), "..": str(file)}}))
    (found,) = name_submissions([tmp_path / "class"], out)
    assert found.name == "ada__03_residual_add.ipynb"


def test_overrides_that_cannot_apply_are_said_and_the_rest_applied(tmp_path):
    from autograder.core.status import Status
    from autograder.reports.graded import overridden_results

    def result(name: str, status: Status = Status.FAILED) -> Result:
        return Result(exercise="residual_add", submission=name, status=status, score=3.0, max_score=10.0,
                      output="3/10 points.")

    (tmp_path / OVERRIDES).write_text("student,exercise,score,reason,note\nada,residual_add,8,oral,x\n"
                                      "bob,residual_add,-1,typo,\nzed,residual_add,5,nobody,\n"
                                      "eve,residual_add,10,grader failed; marked by hand,\n")
    got, warnings = overridden_results(tmp_path, [result("ada__03_residual_add.ipynb"),
                                                  result("bob__03_residual_add.ipynb"),
                                                  result("eve__03_residual_add.ipynb", Status.GRADER_ERROR)])
    assert [r.score for r in got] == [8.0, 3.0, 10.0]
    assert got[2].status == Status.PASSED  # a grader error the teacher scored counts
    assert len(warnings) == 2 and "line 3" in warnings[0] and "zed" in warnings[1]
    (tmp_path / OVERRIDES).write_text("name,points\nada,8\n")
    got, warnings = overridden_results(tmp_path, [result("ada__03_residual_add.ipynb")])
    assert got[0].score == 3.0 and "student, exercise, score, reason" in warnings[0]
