"""A file handed in for one assignment that is another exercise (issue 35 §2): flagged for the teacher under the
assignment it was handed in for, with the reason, never graded and credited as the other exercise; and one rule
for which exercise a file is, for `autograder grade` and `autograder check`.

The run-a-class page's section "A class in LMS folders per assignment" is run here as written (its
`{code-block} bash` blocks; tests/test_run_a_class.py runs the page's five steps)."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from autograder.cli import main
from autograder.exercises import EXERCISES
from autograder.intake.discover import found_as, named_submissions, place_of, relative_parts
from autograder.intake.exercise_of import Malformed, exercise_named, exercise_of
from autograder.intake.submission import answer_code
from tests.conftest import ROOT, SOLUTIONS, solution_code

PAGE = ROOT / "book" / "reference" / "run_a_class.md"
SECTION = "A class in LMS folders per assignment"


def solution(exercise_id: str) -> Path:
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    return path


@pytest.mark.parametrize("name, exercise", [
    ("03_residual_add", "residual_add"), ("Residual add", "residual_add"), ("07 RNN-Hidden", "rnn_hidden"),
    ("ada", None), ("Ada Lovelace_11_assignsubmission_file_", None), ("leaf_sgd and data_trap", None)])
def test_an_assignments_folder_names_one_exercise(name, exercise):
    assert exercise_named(name, EXERCISES) == exercise


@pytest.mark.parametrize("parts, owner, in_folder, assignment", [
    (("ada", "03_residual_add.ipynb"), "ada", True, None),
    (("ada", "bob_1002_5002_x.ipynb"), "ada", True, None),  # Ada's file, named like Bob's Canvas download
    (("ada", "Bob B_12_assignsubmission_file_", "x.ipynb"), "ada", True, None),
    (("bob_1002_5002_x.ipynb",), "bob_1002_5002_x.ipynb", False, None),  # no folder: the LMS's file name
    (("03_residual_add", "bob_1002_5002_x.ipynb"), "bob_1002_5002_x.ipynb", False, "residual_add"),
    (("03_residual_add", "ada", "07_rnn_hidden", "x.ipynb"), "ada", True, "residual_add"),  # only the first folder
    (("03_residual_add.ipynb",), "03_residual_add.ipynb", False, None),  # a file, not an assignment's folder
])
def test_whose_and_for_which_assignment_from_the_layout_alone(parts, owner, in_folder, assignment):
    place = place_of(parts, EXERCISES)
    assert (place.owner, place.in_folder, place.assignment) == (owner, in_folder, assignment)


def test_the_path_below_the_graded_folder_is_proved_by_the_name_the_batch_gave(tmp_path):
    class_dir = tmp_path / "class"
    files = [class_dir / "ada" / "bob__x.ipynb", class_dir / "ada__bob" / "x.ipynb",  # one name, two places
             class_dir / "Núñez José_3_assignsubmission_file_" / "x.py", class_dir / ("a" * 200) / "x.py"]
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
    found = named_submissions([class_dir])
    assert len({s.name for s in found}) == len(files)  # the batch made the names unique
    for s in found:
        assert found_as(str(s.path), s.name) == relative_parts(s.path, [class_dir]) == s.parts
    assert found_as(str(class_dir / "ada" / "x.py"), "bob__x.py") is None  # a name the path does not prove


def notebook_of(exercise: str, path: Path, metadata: bool = True) -> Path:
    nb = nbformat.read(solution(exercise), as_version=4)
    if not metadata:
        nb.metadata.pop("autograder", None)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_a_file_of_another_exercise_is_flagged_under_its_assignment(tmp_path):
    other = answer_code(notebook_of("rnn_hidden", tmp_path / "x.ipynb"))
    flagged = exercise_of(other, None, EXERCISES, handed_in_for="residual_add")
    assert isinstance(flagged, Malformed) and flagged.exercise == "residual_add"
    assert "rnn_hidden" in flagged.message and "residual_add" in flagged.message
    named = tmp_path / "07_rnn_hidden.py"  # no metadata: its name says which
    named.write_text(solution_code("rnn_hidden"))
    assert isinstance(exercise_of(answer_code(named), None, EXERCISES, handed_in_for="residual_add"), Malformed)
    plain = tmp_path / "answer.py"
    plain.write_text(solution_code("residual_add"))
    assert exercise_of(answer_code(plain), None, EXERCISES, handed_in_for="residual_add") == "residual_add"
    assert exercise_of(other, None, EXERCISES, handed_in_for="rnn_hidden") == "rnn_hidden"
    disagree = exercise_of(answer_code(plain), "rnn_hidden", EXERCISES, handed_in_for="residual_add")
    assert isinstance(disagree, Malformed) and "--exercise rnn_hidden" in disagree.message
    assert isinstance(exercise_of(answer_code(plain), None, EXERCISES), Malformed)  # no folder, no name: as before


def section_commands(page: Path, title: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(page.read_text())
    found, inside = [], False
    for i, t in enumerate(tokens):
        if t.type == "heading_open":
            inside = tokens[i + 1].content == title
        elif inside and t.type == "fence" and t.info.strip() == "{code-block} bash":
            found.append(t.content.strip())
    return found


@pytest.mark.slow
def test_the_pages_class_in_folders_per_assignment_runs_as_written(tmp_path):
    """Eve's notebook of 07 uploaded to the 03 assignment: malformed under residual_add with the reason, in the
    report's needs attention; her 07 counts once, from its own assignment; Ada's 03 passes."""
    blocks = section_commands(PAGE, SECTION)
    assert blocks
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("*.py"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COLUMNS": "400"}  # a wide terminal: the table's reason on one line
    printed = ""
    for block in blocks:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (block, done.stdout[-3000:], done.stderr[-3000:])
        printed += done.stdout
    out = tmp_path / "graded_by_assignment"
    results = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/results.json")}
    assert len(results) == 3
    wrong = results["03_residual_add__noethereve_1005_5005_07_rnn_hidden.ipynb"]
    assert (wrong["exercise"], wrong["status"], wrong["score"]) == ("residual_add", "malformed", 0)
    assert "handed in for the assignment of exercise residual_add" in wrong["output"]
    assert "handed in for the assignment" in " ".join(printed.split())  # grade's table says why
    right = results["07_rnn_hidden__Eve_Noether_15_assignsubmission_file___07_rnn_hidden.ipynb"]
    assert (right["exercise"], right["status"]) == ("rnn_hidden", "passed")
    assert results["03_residual_add__lovelaceada_1001_5001_03_residual_add.ipynb"]["status"] == "passed"

    report = out / "report"
    rows = {r["student"]: r for r in csv.DictReader((report / "gradebook_lms.csv").open())}
    eve = next(r for s, r in rows.items() if "Noether" in s)
    assert (eve["residual_add"], eve["rnn_hidden"]) == ("0", "10")  # 07 credited once, 03 not from 07's notebook
    canvas = {r["ID"]: r for r in csv.DictReader((report / "gradebook_canvas.csv").open()) if r.get("ID")}
    assert canvas["1005"]["03_residual_add (4411)"] == "0" and canvas["1001"]["03_residual_add (4411)"] == "10"
    page = (report / "index.html").read_text()
    attention = page.split('id="attention"', 1)[1].split('id="missing"', 1)[0]
    malformed = re.search(r"Unreadable \(malformed\).*?</tr>", attention, re.S)
    assert malformed and "Noether, Eve</a> (#3)" in malformed.group(0)  # exercise 3, residual_add
    assert "another exercise&#39;s notebook handed in" in malformed.group(0) or \
        "another exercise's notebook handed in" in malformed.group(0)
    eve_page = next((report / "students").glob("Noether*.html")).read_text()
    assert "handed in for the assignment of exercise residual_add" in " ".join(eve_page.split())


@pytest.mark.slow
def test_check_takes_every_name_grade_takes(tmp_path, capsys):
    """One rule (exercise_of) for both: each name `grade` understands, `check` understands as the same exercise
    (a file named on the command line: no folder says what it was handed in for)."""
    names = ["lovelaceada_1001_5001_03_residual_add-1.py", "Ada Lovelace_11_assignsubmission_file_residual_add.py",
             "Residual Add - Ada.py", "residual_add-ada.py"]
    folder = tmp_path / "class"
    folder.mkdir()
    for name in names:
        (folder / name).write_text(solution_code("residual_add"))
    out = tmp_path / "grades"
    assert main(["grade", str(folder), "--quiet", "--out", str(out), "--jobs", "1"]) == 0
    graded = {json.loads(p.read_text())["submission_path"]: json.loads(p.read_text())
              for p in out.glob("*/results.json")}
    assert {Path(p).name: r["exercise"] for p, r in graded.items()} == {n: "residual_add" for n in names}
    for name in names:
        capsys.readouterr()
        assert main(["check", str(folder / name)]) == 0, capsys.readouterr()
    none = folder / "hw3.py"  # neither takes a name of no exercise
    none.write_text(solution_code("residual_add"))
    assert main(["check", str(none)]) == 2
    assert main(["grade", str(none), "--quiet", "--out", str(tmp_path / "g2"), "--jobs", "1"]) == 0
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "g2").glob("*/results.json")]
    assert result["status"] == "malformed"
