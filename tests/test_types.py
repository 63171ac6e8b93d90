"""The package's annotations hold: `mypy` checks autograder/ as pyproject.toml's [tool.mypy] says, and finds no
error. The type check holds the package's types as test_layers.py's import-linter holds its layers: a change that
passes None where a value is needed, or returns another type than it says, fails here and not in a learner's
notebook."""

import subprocess
import sys

from tests.conftest import ROOT


def test_the_package_type_checks():
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
