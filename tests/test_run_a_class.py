"""book/reference/run_a_class.md's commands, run in the order the page gives them, on the sample class: what the
page promises a teacher is what the commands do. The page's shell blocks are read with markdown-it (the parser
MyST uses), never with a pattern of our own."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.conftest import ROOT

PAGE = ROOT / "book" / "reference" / "run_a_class.md"


def commands(page: Path) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(page.read_text())
    return [t.content.strip() for t in tokens if t.type == "fence" and t.info.strip() == "bash"]


def test_the_page_gives_the_five_steps_in_order():
    """Each block's first command that is not an `export` of a setting (the salt, before grading)."""
    found = [next(ln for ln in c.splitlines() if not ln.startswith("export ")).split()[0:2] for c in commands(PAGE)]
    assert found[:5] == [["autograder", "release"], ["cp", "-r"], ["autograder", "grade"], ["autograder", "report"],
                         ["head", "-3"]]
    again = [c for c in commands(PAGE) if "--out grades" in c and c not in commands(PAGE)[:5]]
    assert len(again) == 2 and all("autograder grade submissions" in c for c in again)  # "Grading again"


@pytest.mark.slow
def test_the_commands_run_in_order_on_the_sample_class(tmp_path):
    """In a folder with the sample class and its rosters (what a teacher's copy has), each command exits 0 and
    leaves what the page says it leaves."""
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("*.py"))
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_SALT"}  # the page sets its own
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    printed = []
    for command in commands(PAGE):
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        printed.append(done.stdout)

    handout = tmp_path / "handout"
    assert (handout / "exercises").is_dir() and not (handout / "solutions").exists()
    assert not (handout / "references").exists()
    assert "Ask your teacher" in (handout / "book" / "after" / "fixes.md").read_text()  # the page says so

    results = list((tmp_path / "grades").glob("*/results.json"))  # where the page says they are
    assert len(results) == 72 and not (tmp_path / "grades" / "results.json").exists()

    rows = list(csv.DictReader((tmp_path / "grades" / "gradebook.csv").open()))
    assert len(rows) == 72
    assert "72 submissions: " in printed[2] and "autograder report" in printed[2]  # counts, then the next command

    report = tmp_path / "grades" / "report"
    assert (report / "index.html").is_file()
    students = {p.name for p in (tmp_path / "feedback").iterdir() if p.is_dir()}
    assert len(students) == 6 and all((tmp_path / "feedback" / s / "index.html").is_file() for s in students)
    header = printed[4].splitlines()[0]
    assert header.startswith("Student,ID,SIS User ID,SIS Login ID,Section")
    assert (report / "gradebook_lms.csv").is_file()

    # Grading again: Bob's folder, then one exercise with a score set by hand; still one result per file
    assert "12 submissions" in printed[5]
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "grades" / "gradebook.csv").open())}
    assert len(rows) == 72 and rows["bob__03_residual_add.ipynb"]["status"] == "passed"
    assert rows["cleo__05_sliced_input.ipynb"]["score"] == "6"  # the override, in gradebook.csv too
    canvas = {r["SIS Login ID"]: r for r in csv.DictReader((report / "gradebook_canvas.csv").open())}
    assert canvas["cleo"]["05_sliced_input (4413)"] == "6" and canvas["bob"]["03_residual_add (4411)"] == "10"
