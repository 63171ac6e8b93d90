"""solutions/ -> exercises/: the TODO replacement, hidden material, and the drift check."""

import shutil

import nbformat
import pytest

from autograder.assign import AssignError, assign, strip_solutions
from tests.conftest import EXERCISE_NOTEBOOKS, SOLUTIONS


def test_solution_region_becomes_an_indented_todo():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    out = strip_solutions(source)
    assert "return x + 1" not in out
    assert "    raise NotImplementedError" in out
    ns = {}
    exec(out, ns)
    with pytest.raises(NotImplementedError):
        ns["f"](1)


def test_hidden_region_is_dropped_and_unbalanced_markers_refused():
    assert strip_solutions("a = 1\n### BEGIN HIDDEN\nsecret = 2\n### END HIDDEN\nb = 3\n") == "a = 1\nb = 3\n"
    with pytest.raises(AssignError):
        strip_solutions("### BEGIN SOLUTION\nx = 1\n")


def test_repository_exercises_match_solutions():
    assert assign(SOLUTIONS, EXERCISE_NOTEBOOKS, check=True) == []


def test_drift_is_detected_and_fixed(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, solutions)
    assign(solutions, exercises)
    assert assign(solutions, exercises, check=True) == []
    nb = nbformat.read(solutions / "01_residual_add.ipynb", as_version=4)
    nb.cells[0].source += "\nA new sentence."
    nbformat.write(nb, solutions / "01_residual_add.ipynb")
    (exercises / "99_stale.ipynb").write_text("{}")
    drifts = {d.path.name: d.reason for d in assign(solutions, exercises, check=True)}
    assert set(drifts) == {"01_residual_add.ipynb", "99_stale.ipynb"}
