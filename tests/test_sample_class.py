"""The README's main job: the bundled sample class grades to the verdicts its students stand for."""

import csv
import json
import subprocess
import sys

import pytest

from autograder.exercises import EXERCISES
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "samples/class", "--out", str(out),
                           "--jobs", "2"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    return out, rows, proc.stdout


def by_student(rows, student):
    return {r["exercise"]: r for name, r in rows.items() if name.startswith(student + "__")}


def test_one_row_per_notebook_and_a_summary(graded):
    _, rows, stdout = graded
    assert len(rows) == 6 * len(EXERCISES)
    assert "submissions graded" in stdout and "gradebook.csv" in stdout
    assert not [n for n, r in rows.items() if r["status"] == "grader_error"]


@pytest.mark.parametrize("student, status", [("ada", "passed"), ("eve", "passed"), ("bob", "not_attempted")])
def test_whole_students(graded, student, status):
    _, rows, _ = graded
    mine = by_student(rows, student)
    assert set(mine) == set(EXERCISES)
    assert {r["status"] for r in mine.values()} == {status}


@pytest.mark.parametrize("student", ["cleo", "dan"])
def test_broken_and_wrong_fixes_score_less(graded, student):
    _, rows, _ = graded
    mine = by_student(rows, student)
    assert set(mine) == set(EXERCISES)
    assert all(float(r["score"]) < float(r["max_score"]) == 10 for r in mine.values())


def test_every_broken_file_has_its_own_verdict(graded):
    out, rows, _ = graded
    frank = by_student(rows, "frank")
    assert set(frank) == set(EXERCISES)  # the exercise is known even for unreadable files (from the name)
    expected = {"residual_add": "malformed", "inplace_dropout": "malformed", "sliced_input": "malformed",
                "rnn_hidden": "failed", "leaf_sgd": "crashed", "data_trap": "failed", "custom_inplace": "malformed"}
    assert {e: r["status"] for e, r in frank.items()} == expected
    faked = json.loads((out / "frank__05_leaf_sgd.ipynb" / "results.json").read_text())
    assert faked["score"] == 0 and '"score": 10' in faked["stdout"]  # printing a score earns nothing
