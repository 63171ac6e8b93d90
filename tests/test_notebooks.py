"""The notebooks: each failure cell raises the documented error, nothing else raises, and the
self-check says what it should (full marks on a solution, 'not attempted' on an untouched exercise)."""

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
    report = next(text(c) for c in nb.cells if c.cell_type == "code" and "check(" in c.source)
    assert "Every check passed" in report, report


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_exercise_notebooks_hide_the_solution(path):
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "### BEGIN SOLUTION" not in source and "### END SOLUTION" not in source
    assert not any("solution-only" in tags(c) for c in nb.cells)
    assert any("answer" in tags(c) and "NotImplementedError" in c.source for c in nb.cells)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
