"""`autograder release OUT --repository URL`: the student edition holds no answer, installs, points at the
teacher's copy, its notebooks run top to bottom with check() answering, and its book builds."""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from autograder import cli
from autograder.assign import SETUP_TAG, exercise_notebook
from autograder.intake.submission import is_answer_cell
from autograder.release import LEFT_OUT, without_solutions
from tests.conftest import ROOT, SOLUTIONS

URL = "https://git.example.edu/teacher/inplace-course"
REGION = re.compile(r"### BEGIN (SOLUTION|HIDDEN)[^\n]*\n(?P<body>.*?)### END \1", re.DOTALL)


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "student-edition"
    assert cli.main(["release", str(out), "--repository", URL]) == 0
    return out


def texts(folder: Path) -> dict[Path, str]:
    """Every file's text (notebooks as their JSON, which holds each cell's source), following no link."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                found[path] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                found[path] = path.read_bytes().decode("latin-1")
    return found


def answers() -> dict[str, str]:
    """What gives an exercise away: each solution's answer regions and answer cells, each reference's code."""
    found = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            for region in REGION.finditer(cell.source):
                if region["body"].strip():
                    found[f"{path.name} cell {i}"] = region["body"].strip()
    for path in sorted((ROOT / "references").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found[f"{path.name}: {node.name}"] = ast.get_source_segment(path.read_text(), node)
    return found


def test_no_answer_is_anywhere_in_the_student_edition(edition):
    files = texts(edition)
    assert not [p for p in edition.rglob("*") if p.name in ("solutions", "references")]
    given = {name: text for name, text in answers().items() if len(text.splitlines()) > 1 or len(text) > 30}
    assert len(given) > 24  # every exercise's solution and reference is looked for
    normalised = {p: re.sub(r"\s+", " ", t) for p, t in files.items()}
    for name, text in given.items():
        wanted = re.sub(r"\s+", " ", text)
        assert not [p for p, t in normalised.items() if wanted in t], name


# Every line of an answer, looked for in every file of the edition. A line is an answer line when it is code the
# student must write: a logical line (a statement as Python reads it, whatever physical lines it spans; a
# compound statement's header is one) of a solution's answer cells, or of a `### BEGIN HIDDEN` region anywhere
# in it, compared without its comment and without any whitespace (so that a re-indented or re-spaced copy is
# found too), except
# - a line that a starter notebook shows (the edition's exercise notebooks give it by design: the scaffold, the
#   `def`, the `return` after the TODO, the broken code the exercise starts from, a line another exercise shows);
# - an import (it names a tool, which the task names too);
# - a line of fewer than MIN_CHARS characters once its whitespace is gone (`return p`, `else:`): it says nothing
#   alone. MIN_CHARS is below the shortest whole answer of an exercise, residual_add's `out = out + x` (9);
# - a line of TAUGHT: what the chapters teach as a general rule, or plain Python, each with its reason. The
#   exercise is to apply the rule where it belongs, which no line alone gives away.
# A line of an answer is then searched for in each file of the edition as text without whitespace: notebooks by
# their cells' sources and outputs (their JSON escapes quotes), every other file as it is, the book's pages too.
# An answer that is an arrangement of given lines (leaf_sgd's: where `with torch.no_grad():` goes) has no line of
# its own to find; test_no_answer_is_anywhere_in_the_student_edition looks for each answer region whole.
MIN_CHARS = 8
TAUGHT = {
    "out=out+x": "chapters 7 and 8 and the card teach it as the rewrite of any `out += x`, and `autograder blame`, "
                 "which students run, suggests it",
    "ctx.mark_dirty(x)": "chapter 10 and the card teach the call; custom_inplace asks what to save and return",
    "returntensor": "plain Python",
    "ifisinstance(state,torch.Tensor):": "plain Python (the package's rnn_hidden exercise checks the same)",
}
_BLANK = re.compile(r"\s+")
_SKIPPED = (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)


def code_lines(source: str) -> list[tuple[str, str]]:
    """(the logical line without comment and whitespace, its first physical line) for each statement of `source`
    (tokenize decides); a source that does not tokenize, line by line as it is."""
    physical = source.splitlines()
    found, tokens = [], []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NEWLINE:
                if tokens:
                    found.append((_BLANK.sub("", "".join(t.string for t in tokens)),
                                  physical[tokens[0].start[0] - 1].strip()))
                tokens = []
            elif token.type not in _SKIPPED:
                tokens.append(token)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(_BLANK.sub("", line), line.strip()) for line in physical]
    if tokens:
        found.append((_BLANK.sub("", "".join(t.string for t in tokens)), physical[tokens[0].start[0] - 1].strip()))
    return found


def answer_lines() -> dict[str, str]:
    """{line without whitespace: where it is} for every answer line of every solution (the rule above)."""
    given = set()
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for cell in exercise_notebook(nbformat.read(path, as_version=4)).cells:
            given |= {line for line, _ in code_lines(cell.source)} if cell.cell_type == "code" else set()
            given |= {_BLANK.sub("", line) for line in cell.source.splitlines()}
    found: dict[str, str] = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type != "code":
                continue
            sources = [cell.source] if is_answer_cell(cell) else []
            sources += [region["body"] for region in REGION.finditer(cell.source) if region[1] == "HIDDEN"]
            for source in sources:
                for line, raw in code_lines(source):
                    if (len(line) >= MIN_CHARS and line not in given and line not in TAUGHT
                            and not raw.startswith(("import ", "from "))):
                        found.setdefault(line, f"{path.name} cell {i}: {raw}")
    return found


def readable(path: Path, text: str) -> str:
    """A file's text as a reader sees it, without whitespace: a notebook's cells and outputs, else the text."""
    if path.suffix == ".ipynb":
        try:
            nb = nbformat.reads(text, as_version=4)
        except Exception:  # not a notebook after all: its text as it is
            return _BLANK.sub("", text)
        parts = [cell.source for cell in nb.cells]
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                parts.append(output.get("text", ""))
                parts.extend(v for v in output.get("data", {}).values() if isinstance(v, str))
        return _BLANK.sub("", "\n".join(parts))
    return _BLANK.sub("", text)


def test_the_rule_finds_answer_lines_in_every_solution():
    lines = answer_lines()
    # all but leaf_sgd (an arrangement of given lines) and residual_add (`out = out + x`, TAUGHT)
    assert len({where.split(" cell ")[0] for where in lines.values()}) == len(list(SOLUTIONS.glob("*.ipynb"))) - 2
    for answer in ("p=p.clamp(min=eps)", "q=q*self.scale", "d_loss=bce(D(real),1.0)+bce(D(fake.detach()),0.0)"):
        assert answer in lines
    assert code_lines("out = out + x  # a new tensor\nraise RuntimeError(\n    'a'  # why\n)") == [
        ("out=out+x", "out = out + x  # a new tensor"), ("raiseRuntimeError('a')", "raise RuntimeError(")]


def test_no_line_of_any_answer_is_anywhere_in_the_student_edition(edition):
    files = {path: readable(path, text) for path, text in texts(edition).items()}
    leaks = [f"{path.relative_to(edition)}: {where}" for line, where in answer_lines().items()
             for path, text in files.items() if line in text]
    assert not leaks, "\n".join(leaks)


def test_the_pages_that_give_answers_away_are_left_out_and_say_so(edition):
    """Each page of LEFT_OUT keeps its place (the table of contents, the chapters' links) and its title, and
    holds no code: it tells the student that the teacher holds it back."""
    assert "after/fixes.md" in LEFT_OUT
    for name in LEFT_OUT:
        page = (edition / "book" / name).read_text(encoding="utf-8")
        title = page.splitlines()[0]
        assert title.startswith("# ") and title in (ROOT / "book" / name).read_text(encoding="utf-8").splitlines()
        assert "```" not in page and ":::" not in page and "teacher" in page

def test_the_edition_points_at_the_teachers_copy(edition):
    assert f'Repository = "{URL}"' in (edition / "pyproject.toml").read_text()
    assert yaml.safe_load((edition / "book" / "_config.yml").read_text())["repository"]["url"] == URL
    notebooks = sorted((edition / "exercises").glob("*.ipynb"))
    assert [p.name for p in notebooks] == [p.name for p in sorted(SOLUTIONS.glob("*.ipynb"))]
    for path in notebooks:
        setup = next(c for c in nbformat.read(path, as_version=4).cells if SETUP_TAG in c.metadata.get("tags", []))
        assert f"git+{URL}" in setup.source and "inplace-course/inplace-autograd-course" not in setup.source
    assert URL in (edition / "README.md").read_text()


def test_the_package_installs_without_references(edition, tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            str(edition), "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "autograder/notebook/selfcheck.py" in names
    assert any(n.startswith("autograder/exercises/public/") for n in names)
    assert not [n for n in names if n.startswith(("references/", "solutions/"))]


def test_solution_blocks_are_dropped_from_the_book():
    text = ("Before\n:::{dropdown} The fix\n:class: solution\nout = out + x\n:::\nBetween\n::::{admonition} Note\n"
            ":class: tip\n:::{dropdown} Inner\n:class: dropdown solution\nsecret\n:::\nkept\n::::\nAfter\n")
    assert without_solutions(text) == "Before\nBetween\n::::{admonition} Note\n:class: tip\nkept\n::::\nAfter\n"


@pytest.mark.slow
def test_the_notebooks_run_top_to_bottom_and_check_answers_there(edition):
    """With the edition's own package (PYTHONPATH), no references anywhere: check() judges the untouched answer
    cell, says it is not attempted, and every cell but the one meant to fail runs.

    The twelve notebooks run one after another in one kernel, the namespace emptied (`%reset -f`) before each: a
    kernel each is the book's build's run of the same notebooks (tests/test_book.py), so here one kernel's start
    (a second or three, torch imported) serves all twelve."""
    env = {**os.environ, "PYTHONPATH": str(edition), "AUTOGRADER_REFERENCES": str(edition / "no-references")}
    paths = sorted((edition / "exercises").glob("*.ipynb"))
    assert len(paths) == 12
    run = nbformat.v4.new_notebook(metadata=nbformat.read(paths[0], as_version=4).metadata)
    for path in paths:
        run.cells.append(nbformat.v4.new_code_cell(f"%reset -f\nprint('NOTEBOOK {path.name}')"))
        run.cells += nbformat.read(path, as_version=4).cells
    run.cells.append(nbformat.v4.new_code_cell("import autograder\nprint('PACKAGE', autograder.__file__)"))
    NotebookClient(run, timeout=180, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(paths[0].parent)}}).execute(env=env)
    printed = "".join(o.get("text", "") for c in run.cells if c.cell_type == "code" for o in c.outputs
                      if o.output_type == "stream")
    said = dict(re.findall(r"^NOTEBOOK (\S+)\n(.*?)(?=^NOTEBOOK |^PACKAGE |\Z)", printed, re.M | re.S))
    assert sorted(said) == [p.name for p in paths]
    for name, words in said.items():
        assert "Not attempted yet" in words, name
    assert f"PACKAGE {edition / 'autograder'}" in printed  # the edition's own package answered


@pytest.mark.slow
def test_the_book_in_the_edition_builds(edition, tmp_path):
    config = yaml.safe_load((edition / "book" / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"  # the chapters' cells are tests/test_book.py's business
    for extension, folder in config.get("sphinx", {}).get("local_extensions", {}).items():
        config["sphinx"]["local_extensions"][extension] = str(edition / "book" / folder)
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    build = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build",
                            str(edition / "book"), "--config", str(tmp_path / "_config.yml"), "--path-output",
                            str(tmp_path / "book")], capture_output=True, text=True, timeout=600, cwd=edition)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert (tmp_path / "book" / "_build" / "html" / "index.html").is_file()


def test_release_refuses_a_folder_in_use_and_a_bad_address(tmp_path, capsys):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    assert cli.main(["release", str(tmp_path / "used"), "--repository", URL]) == 2
    assert "not an empty folder" in capsys.readouterr().err and (tmp_path / "used" / "notes.txt").read_text() == "mine"
    assert cli.main(["release", str(tmp_path / "new"), "--repository", "my repo"]) == 2
    assert "--repository must be the address" in capsys.readouterr().err
