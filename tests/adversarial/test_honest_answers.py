"""Honest answers that run in Jupyter get full marks from the grader too, through the real sandbox: what a
notebook allows that plain Python does not (IPython's own syntax, `display`, a cell split in two, each half
compiled on its own), a `@dataclass` helper (which looks its module up in sys.modules), `torch.compile`, and a
`.py` file that reads `__file__`. Each is the solution of residual_add with one such thing added."""

from __future__ import annotations

import nbformat
import pytest

from autograder.intake.submission import is_answer_cell
from tests.adversarial.conftest import grade_files, needs_sandbox
from tests.conftest import EXERCISE_NOTEBOOKS, solution_code

EXERCISE = "residual_add"
SOLUTION = solution_code(EXERCISE)


def notebook(*cells: str) -> str:
    """The exercise notebook with its answer cell replaced by these answer cells."""
    nb = nbformat.read(next(EXERCISE_NOTEBOOKS.glob(f"*_{EXERCISE}.ipynb")), as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if is_answer_cell(c))
    answers = [nbformat.v4.new_code_cell(cell, metadata={"tags": ["answer"]}) for cell in cells]
    nb.cells = [*nb.cells[:at], *answers, *nb.cells[at + 1:]]
    return nbformat.writes(nb)


def with_lines(before: str = "", in_forward: str = "") -> str:
    """The solution with `before` put ahead of it and `in_forward` run first in forward()."""
    code = SOLUTION.replace("    def forward(self, x):\n", f"    def forward(self, x):\n{in_forward}", 1)
    return before + code


assert "    def forward(self, x):\n" in SOLUTION

HONEST = {
    "continued_comparison.ipynb": notebook(with_lines("LIMIT = (1\n    != 2)\n")),
    "dataclass_helper.ipynb": notebook(with_lines(
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Settings:\n    scale: float = 1.0\n\n\n",
        "        assert Settings().scale == 1.0\n")),
    "torch_compile.ipynb": notebook(with_lines(
        "import torch\n\nadd = torch.compile(lambda a, b: a + b, backend='eager')\n\n\n",
        "        assert torch.equal(add(x, x), x + x)\n")),
    "display_left.ipynb": notebook(with_lines("display('the block is defined below')\n")),
    "split_cell.ipynb": notebook("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n",
                                 "from __future__ import annotations\n\n" + SOLUTION),
    "help_left.ipynb": notebook(with_lines("import torch\ntorch.relu?\n%time total = 1 + 1\n")),
    "reads_file.py": with_lines("import os\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n\n"),
}


@needs_sandbox
@pytest.mark.slow
def test_honest_answers_jupyter_runs_get_full_marks(pool, tmp_path):
    (tmp_path / "class").mkdir()
    graded = grade_files(pool, tmp_path / "class", tmp_path / "out", HONEST, exercise=EXERCISE)
    marks = {name: (r["status"], r["score"]) for name, r in graded.items()}
    assert marks == {name: ("passed", 10) for name in HONEST}, {
        name: r["output"][:600] for name, r in graded.items() if r["status"] != "passed"}
