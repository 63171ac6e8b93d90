"""Every cost the grader pays for a submission is bounded, and paid inside the sandbox (issue 29 §3).

What the grader's own process runs on text a student controls (reading the notebook, finding its answer cells,
the diff of a suggested rewrite) is linear in that text: each is fed inputs that grow (blank lines, magics, long
lines, many cells, deep nesting, a changed span of blank lines), and the cost of 4n is compared with the cost of
n in the same run, as a ratio with a generous factor (a quadratic cost is 16 times; linear is 4). What is not
linear (IPython's transformer: quadratic in a cell's magics) runs where the answer runs, in the sandboxed job
under its time limit: a batch with such a file grades its neighbours, and the file gets its own verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.blame.suggest.cst_edit import changed_lines, unified_diff
from autograder.intake.cells import may_be_ipython
from autograder.intake.submission import answer_code
from tests.adversarial.conftest import needs_sandbox
from tests.adversarial.test_honest_answers import notebook  # the exercise notebook with these answer cells
from tests.conftest import ROOT, solution_code

EXERCISE = "residual_add"
SOLUTION = solution_code(EXERCISE)
LINEAR = 10.0
"""The most t(4n) / t(n) may be: linear is 4, quadratic 16; the margin is for a machine shared with other work."""




def cost(run: Callable[[], object]) -> float:
    """The least of five timings: the cost itself, with as little of the machine's other work as can be."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def growth(make: Callable[[int], Callable[[], object]], n: int) -> float:
    """t(4n) / t(n) of the work `make(size)` returns, both measured in this run."""
    small, large = make(n), make(4 * n)
    return cost(large) / cost(small)


def read_notebook(tmp_path: Path, cells: Callable[[int], list[str]]) -> Callable[[int], Callable[[], object]]:
    """A maker of the work of reading (answer_code) a notebook whose answer cells grow with n."""
    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"grown_{n}.ipynb"
        path.write_text(notebook(*cells(n)))
        return lambda: answer_code(path)
    return make


GROWING = {  # shape: (the answer cells of size n, n: large enough that a fixed cost does not hide the growth)
    "blank lines": (lambda n: [SOLUTION + "\n" * (10 * n)], 4000),
    "blank lines holding spaces": (lambda n: [SOLUTION + " \n\t\n" * (5 * n)], 4000),
    "line magics": (lambda n: [SOLUTION + "".join(f"%time total_{i} = [1, 2, 3]\n" for i in range(n // 4))], 4000),
    "blank lines then a magic": (lambda n: ["\n" * (10 * n) + "%time x = 1\n" + SOLUTION], 4000),
    "a long line": (lambda n: [SOLUTION + "x = '" + "?" * (500 * n) + "'\n"], 8000),
    "question marks then spaces": (lambda n: [SOLUTION + "#" + "? " * (250 * n) + "\n"], 8000),
    "many cells": (lambda n: [SOLUTION] + [f"x_{i} = {i}" for i in range(n // 4)], 4000),
    "deep nesting": (lambda n: [SOLUTION + "x = " + "(" * (10 * n) + ")" * (10 * n) + "\n"], 4000),
}


@pytest.mark.parametrize("shape", GROWING)
def test_reading_a_submission_is_linear_in_it(tmp_path, shape):
    cells, n = GROWING[shape]
    ratio = growth(read_notebook(tmp_path, cells), n)
    assert ratio < LINEAR, f"{shape}: reading 4n cost {ratio:.1f} times reading n"


def test_telling_a_cell_that_may_be_ipython_is_linear():
    """The harness asks IPython only about a cell where this pattern matches; a run of blank lines (whose
    whitespace the pattern once crossed) costs it time linear in the run."""
    ratio = growth(lambda n: lambda: may_be_ipython("x = 1" + "\n" * n + " \t\n" * n + "y = 2"), 100_000)
    assert ratio < LINEAR, f"the pattern on 4n blank lines cost {ratio:.1f} times n"


def test_the_diff_of_a_rewrite_is_linear_in_the_file():
    """A rewrite that adds an import at the top and changes a line at the bottom: the changed span between
    is every line of the file (blank lines, difflib's worst case)."""
    def make(n: int) -> Callable[[], object]:
        body = "\n" * (2 * n)
        before, after = f"import torch\n{body}y = x + 1\n", f"import torch\nimport math\n{body}y = (x + 1)\n"
        return lambda: (changed_lines(before, after), unified_diff(before, after, "answer.py"))
    ratio = growth(make, 2000)
    assert ratio < LINEAR, f"the diff of 4n lines cost {ratio:.1f} times that of n"


def test_the_diff_of_a_long_span_is_still_a_true_diff():
    body = "\n" * 3000
    before, after = f"import torch\n{body}x = 1\ny = x + 1\n", f"import torch\nimport math\n{body}x = 1\ny = (x + 1)\n"
    assert unified_diff(before, after, "a.py").splitlines() == [
        "--- a.py", "+++ a.py", "@@ -1,2 +1,3 @@", " import torch", "+import math", " ",
        "@@ -3002,2 +3003,2 @@", " x = 1", "-y = x + 1", "+y = (x + 1)"]
    assert changed_lines(before, after) == (2, "", "import math\n")  # with the (blank) line it goes before


HOSTILE_MAGICS = SOLUTION + "".join(f"%time total_{i} = [{', '.join(['1'] * 65)}]\n" for i in range(300))
"""A correct answer, then a few hundred `%time` lines (80 kB): IPython's transformer takes minutes on it."""


@needs_sandbox
@pytest.mark.slow
def test_a_batch_with_costly_files_grades_their_neighbours(tmp_path):
    """The real command line, sandboxed, two slots: two honest classmates beside a correct answer followed by
    40,000 blank lines (graded as the answer it is) and one whose magics cost IPython minutes (its own time-limit
    verdict, paid in its own slot)."""
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    files = {"ada.ipynb": notebook(SOLUTION), "bob.ipynb": notebook(SOLUTION),
             "blank_lines.ipynb": notebook(SOLUTION + "\n" * 40_000), "magics.ipynb": notebook(HOSTILE_MAGICS)}
    for name, text in files.items():
        (folder / name).write_text(text)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(folder), "--exercise", EXERCISE,
                           "--out", str(out), "--jobs", "2", "--timeout", "15", "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    results = {name: json.loads((out / name / "results.json").read_text()) for name in files}
    marks = {name: (r["status"], r["score"]) for name, r in results.items()}
    assert marks == {"ada.ipynb": ("passed", 10), "bob.ipynb": ("passed", 10), "blank_lines.ipynb": ("passed", 10),
                     "magics.ipynb": ("timed_out", 0)}, {n: r["output"] for n, r in results.items()}
    assert "15 s" in results["magics.ipynb"]["output"]
    assert took < 300, f"the batch took {took:.0f} s"
