"""solutions/ -> exercises/: the TODO replacement, hidden material, and the drift check."""

import ast
import shutil

import nbformat
import pytest

from autograder.assign import PREDICT_TAG, AssignError, assign, blank_prediction, strip_solutions
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


def test_a_prediction_becomes_placeholders_and_its_comments_stay():
    source = ('from autograder import predict\n\n# the guess: \u00e9\npredict(raises=True, tensor="output 0 of Relu",\n'
              '        found=1, expected=0)  # versions\n')
    assert blank_prediction(source) == ("from autograder import predict\n\n# the guess: \u00e9\npredict(raises=..., "
                                        "tensor=...,\n        found=..., expected=...)  # versions\n")
    for bad in ("x = 1", "predict()", "predict(True)", "predict(raises=True)\npredict(raises=False)"):
        with pytest.raises(AssignError):
            blank_prediction(bad)


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_exercise_predict_cells_hold_placeholders_only(path):
    for cell in nbformat.read(path, as_version=4).cells:
        if PREDICT_TAG in cell.metadata.get("tags", []):
            (call,) = [n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)]
            assert call.keywords and all(ast.literal_eval(k.value) is ... for k in call.keywords)


def test_repository_exercises_match_solutions():
    assert assign(SOLUTIONS, EXERCISE_NOTEBOOKS, check=True) == []


def test_drift_is_detected_and_fixed(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, solutions)
    assign(solutions, exercises)
    assert assign(solutions, exercises, check=True) == []
    nb = nbformat.read(solutions / "03_residual_add.ipynb", as_version=4)
    nb.cells[0].source += "\nA new sentence."
    nbformat.write(nb, solutions / "03_residual_add.ipynb")
    (exercises / "99_stale.ipynb").write_text("{}")
    drifts = {d.path.name: d.reason for d in assign(solutions, exercises, check=True)}
    assert set(drifts) == {"03_residual_add.ipynb", "99_stale.ipynb"}


def _run_setup_cell(source, installed):
    """Runs an exercise's setup cell with the course installed or not, and returns the pip commands it ran."""
    import importlib.util
    import subprocess
    from unittest import mock

    calls = []
    real = importlib.util.find_spec
    with mock.patch.object(importlib.util, "find_spec", lambda name, *a: real(name, *a) if installed else None), \
         mock.patch.object(subprocess, "run", lambda cmd, **kw: calls.append(cmd)):
        exec(source, {})
    return calls


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_setup_cell_installs_the_course_only_where_it_is_missing(path):
    from autograder.assign import SETUP_TAG, repository

    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert SETUP_TAG in code[0].metadata.get("tags", []), "the setup cell must run before any other code"
    assert _run_setup_cell(code[0].source, installed=True) == []
    needs, course = _run_setup_cell(code[0].source, installed=False)
    assert needs[1:4] == course[1:4] == ["-m", "pip", "install"]
    assert course[-1] == f"inplace-autograd-course @ git+{repository()}" and "--no-deps" in course
    assert not [n for n in needs if n.startswith("torch")] and any(n.startswith("nbformat") for n in needs)


def test_the_setup_cell_says_which_torch_the_course_was_checked_on(capsys, monkeypatch):
    """On Colab the torch is newer than the one the course was checked on: the learner is told, once."""
    import torch

    from autograder.assign import setup_cell

    source = setup_cell().source
    monkeypatch.setattr(torch, "__version__", "2.99.0+cu130")
    _run_setup_cell(source, installed=True)
    assert "checked on torch 2.13 and 2.14; this notebook runs torch 2.99.0+cu130" in capsys.readouterr().out
    for checked in ("2.13.0+cpu", "2.14.1+cu128"):  # both releases the course is checked on: no note
        monkeypatch.setattr(torch, "__version__", checked)
        _run_setup_cell(source, installed=True)
        assert capsys.readouterr().out == ""


def test_book_binder_and_package_agree_on_the_repository_and_torch():
    import re

    import yaml

    from autograder.assign import repository
    from tests.conftest import ROOT

    config = yaml.safe_load((ROOT / "book" / "_config.yml").read_text())
    assert config["repository"]["url"] == repository()
    from autograder.bundle.source import TORCH_PIN

    pin = re.search(r"torch==[\d.]+", (ROOT / "scripts" / "install").read_text()).group()
    assert pin == TORCH_PIN  # the platform bundles install the version the course is tested with
    assert pin in (ROOT / "binder" / "requirements.txt").read_text().split()
