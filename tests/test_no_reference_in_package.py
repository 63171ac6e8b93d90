"""The installed package holds no answer: the references live in references/, which is never installed,
so a submission that imports the exercise's module gets nothing from it."""

import importlib
import inspect
import os
import subprocess
import sys
import zipfile

import pytest

from autograder.bundle.config import BundleConfig
from autograder.bundle.source import PACKAGE_DIR
from autograder.exercises import EXERCISES
from autograder.pipeline import grade_code
from autograder.platforms import gradescope, prairielearn
from autograder.reference_store import ENV, load_reference

PACKAGE_SOURCES = {path: path.read_text(encoding="utf-8") for path in PACKAGE_DIR.rglob("*.py")}


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_reference_defines_what_the_exercise_asks_for(exercise_id):
    reference = load_reference(exercise_id)
    assert {s.name for s in EXERCISES[exercise_id].defines} <= set(reference)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_exercise_module_holds_no_reference(exercise_id):
    module = importlib.import_module(f"autograder.exercises.{exercise_id}")
    reference = load_reference(exercise_id)
    for symbol in EXERCISES[exercise_id].defines:
        assert not hasattr(module, symbol.name), f"{module.__name__} defines {symbol.name}"
    for name, value in vars(module).items():
        assert all(value is not obj for obj in reference.values()), f"{module.__name__}.{name} is the reference"
    for obj in reference.values():  # nor a copy of its code anywhere in the package
        source = inspect.getsource(obj)
        assert not [path for path, text in PACKAGE_SOURCES.items() if source in text]


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_importing_the_exercise_module_scores_nothing(exercise_id):
    module = f"autograder.exercises.{exercise_id}"
    names = ", ".join(s.name for s in EXERCISES[exercise_id].defines)
    result = grade_code(exercise_id, f"from {module} import *\nfrom {module} import {names}\n")
    assert result.score == 0
    assert "ImportError" in result.output and "cannot import name" in result.output


def test_the_package_has_no_references_folder():
    assert not [p for p in PACKAGE_DIR.rglob("*") if p.name.startswith("references")]


def test_references_cannot_be_imported_from_the_installed_package(tmp_path):
    """Outside the checkout (a student's working folder), nothing installed provides `references`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", ENV)}
    code = "import importlib.util, autograder; print(importlib.util.find_spec('references'))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "None"


def test_bundles_ship_references_beside_the_package(tmp_path):
    config = BundleConfig(exercises=("data_trap",))
    with zipfile.ZipFile(gradescope.export(tmp_path / "gs", config)) as zf:
        names = set(zf.namelist())
        run = zf.read("run_autograder").decode()
    assert "references/data_trap.py" in names
    assert not [n for n in names if n.startswith("references/") and n not in ("references/data_trap.py",
                                                                              "references/README.md")]
    assert not [n for n in names if n.startswith("course/") and "references" in n]
    assert f'export {ENV}="$ROOT/source/references"' in run

    prairielearn.export(tmp_path / "pl", config, image="example.edu/course/grader:1")
    server = tmp_path / "pl" / "serverFilesCourse" / prairielearn.SERVER_DIR
    assert (server / "references" / "data_trap.py").is_file()
    assert f'export {ENV}="$HERE/references"' in (server / "run.sh").read_text()
    image = tmp_path / "pl" / "graders" / "inplace-autograder" / "course"
    assert (image / "autograder").is_dir() and not [p for p in image.rglob("*") if "references" in p.name]
