"""The import graph points one way, as pyproject.toml's [tool.importlinter] contracts say: the pure core
(grade.py and what it reads) reaches no runner, harness, locator, file or notebook, and no module imports one of
a layer above it. import-linter reads the graph from the source (function-level imports included)."""

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_the_layers_point_one_way():
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "4 kept, 0 broken" in done.stdout
