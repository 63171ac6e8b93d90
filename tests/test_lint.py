"""The code passes the linter configured in pyproject.toml (ruff): unused names and imports, shadowing,
bugbear's traps. Cheap, and it keeps helpers' and teachers' additions to the same standard."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _ruff() -> str | None:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (pip install -e .[dev])")
def test_ruff_finds_nothing():
    done = subprocess.run([_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
