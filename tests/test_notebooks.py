"""The notebooks: each failure cell raises the documented error, nothing else raises, and the
self-check says what it should (full marks on a solution, 'not attempted' on an untouched exercise)."""

import re

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.exercises import EXERCISES, get
from tests.conftest import EXERCISE_NOTEBOOKS, SOLUTIONS

pytestmark = pytest.mark.slow

# The exercise notebooks' failure cells are the solutions' own (assign copies them, and assign --check
# proves it); nbval runs every exercise notebook, and test_grade_core proves an untouched one is
# "not attempted". So executing the solutions here is enough, and saves a minute of CI.
NOTEBOOKS = [("solution", path) for path in sorted(SOLUTIONS.glob("*.ipynb"))]


def execute(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def errors(cell):
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


def text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def predict_then_diagnose(nb):
    """The learning path: the prediction comes right before the failure cell, and nothing above that cell
    quotes the versions; the verdict comes right after it, and the solution's prediction is what happened
    (every part it gave, right); then a step named for finding the line asserts which line it is, before
    the answer cell."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    failure = next(i for i, c in enumerate(code) if "raises-exception" in tags(c))
    answer = next(i for i, c in enumerate(code) if "answer" in tags(c))
    assert [i for i, c in enumerate(code) if "predict" in tags(c)] == [failure - 1]
    above = nb.cells[:nb.cells.index(code[failure])]
    assert not any("expected version" in c.source for c in above if c.cell_type == "markdown")
    assert code[failure + 1].source.strip() == "predict.reveal()"
    verdict = re.search(r"(\d+) of (\d+) predicted parts right\.", text(code[failure + 1]))
    assert verdict and verdict[1] == verdict[2] != "0", text(code[failure + 1])
    between = nb.cells[nb.cells.index(code[failure]) + 1:nb.cells.index(code[answer])]
    heading = next(i for i, c in enumerate(between) if c.cell_type == "markdown"
                   and re.match(r"#+ .*\bline\b", c.source, re.IGNORECASE))
    assert any(c.cell_type == "code" and re.search(r"^\s*assert ", c.source, re.MULTILINE)
               for c in between[heading:]), "the step that finds the line asserts which line it is"


def test_every_exercise_has_both_notebooks():
    for exercise in EXERCISES.values():
        name = f"{exercise.number:02d}_{exercise.id}.ipynb"
        assert (SOLUTIONS / name).exists() and (EXERCISE_NOTEBOOKS / name).exists(), name


@pytest.mark.parametrize("kind, path", NOTEBOOKS, ids=[f"{k}-{p.stem}" for k, p in NOTEBOOKS])
def test_notebook_raises_exactly_the_documented_error(kind, path):
    nb = execute(path)
    exercise = get(nb.metadata["autograder"]["exercise"])
    failure_cells = [c for c in nb.cells if c.cell_type == "code" and "raises-exception" in tags(c)]
    assert failure_cells, "every notebook reproduces its failure first"
    for cell in failure_cells:
        (error,) = errors(cell)
        assert exercise.failure.matches(error.ename, error.evalue), f"{error.ename}: {error.evalue[:300]}"
    for cell in nb.cells:
        if cell.cell_type == "code" and "raises-exception" not in tags(cell):
            assert not errors(cell), f"unexpected error in a cell of {path.name}: {errors(cell)[0].evalue[:300]}"
    report = next(text(c) for c in nb.cells if c.cell_type == "code" and 'check("' in c.source)
    assert "Every check passed" in report, report
    predict_then_diagnose(nb)


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_exercise_notebooks_hide_the_solution(path):
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "### BEGIN SOLUTION" not in source and "### END SOLUTION" not in source
    assert not any("solution-only" in tags(c) for c in nb.cells)
    assert any("answer" in tags(c) and "NotImplementedError" in c.source for c in nb.cells)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
