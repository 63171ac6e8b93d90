"""The self-check is the grade: in a real Jupyter kernel, check() gives every public check the verdict the
grader gives it, or says before its verdict why it cannot.

For every exercise, in one kernel, every entry of its catalogue (the report's broken code, the correct fixes,
the wrong ones) and the untouched starter is typed into the answer cell and run, then `self_check` (what
check() prints from) runs; the same answer cell is graded as the grader grades a notebook. Then the ways a
learner's kernel and the grader used to disagree, in a notebook graded for real: a helper in its own cell,
imports in another cell, a stale definition after a syntax error, a `@dataclass` helper, and a wrong
definition run after the answer cell.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from jupyter_client import KernelManager

from autograder.batch import Settings, grade_file
from autograder.core.outcome import Trial
from autograder.exercises import EXERCISES
from autograder.intake.cells import marker_line, notebook_code
from autograder.intake.submission import is_answer_cell
from autograder.pipeline import grade_code
from autograder.reference_store import known_submissions
from autograder.runner import InProcessRunner
from tests.conftest import EXERCISE_NOTEBOOKS, solution_code

pytestmark = pytest.mark.slow

VERDICT = """
import json as _json
from autograder.notebook.selfcheck import self_check as _self_check
_found = _self_check({exercise!r})
print("VERDICT" + _json.dumps({{"checks": {{t.name: t.status.value for t in _found.result.tests}},
                               "outputs": {{t.name: t.output for t in _found.result.tests}},
                               "status": _found.result.status.value, "notes": list(_found.notes)}}))
"""


class Kernel:
    """A real IPython kernel (as Jupyter starts one), fed cells one at a time, each stored in its history."""

    def __init__(self) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel()
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code: str) -> str:
        """Runs one cell (errors are the cell's own, as in Jupyter); what it printed."""
        printed: list[str] = []

        def hook(message: dict) -> None:
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])

        self.client.execute_interactive(code, store_history=True, output_hook=hook, timeout=300)
        return "".join(printed)

    def verdict(self, exercise: str) -> dict:
        printed = self.run(VERDICT.format(exercise=exercise))
        line = next((ln for ln in printed.splitlines() if ln.startswith("VERDICT")), None)
        assert line is not None, printed[-3000:]
        return json.loads(line[len("VERDICT"):])

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def public_verdicts(result) -> dict[str, str]:
    """The grader's verdict on public inputs for each visible check: a visible check it failed on a hidden
    trial (TestResult.trial) passed on the public ones, which are all check() has."""
    exercise = EXERCISES[result.exercise]
    return {t.name: ("passed" if t.trial and not exercise.scenario(Trial.from_key(t.trial).scenario).public
                     else t.status.value)
            for t in result.tests if t.visibility == "visible"}


def starter(exercise_id: str) -> str:
    """The exercise notebook's answer cell, untouched (its marker line included)."""
    nb = nbformat.read(next(EXERCISE_NOTEBOOKS.glob(f"*_{exercise_id}.ipynb")), as_version=4)
    return next(c.source for c in nb.cells if is_answer_cell(c))


def catalogue(exercise_id: str) -> dict[str, str]:
    known = known_submissions(exercise_id)
    return {"the starter": starter(exercise_id), "the report's code": known.broken,
            "the solution": solution_code(exercise_id), **{f"correct: {k}": v for k, v in known.correct.items()},
            **{f"wrong: {k}": code for k, (code, _) in known.wrong.items()}}


def as_answer_cell(code: str) -> str:
    return code if code.startswith("# Answer cell") else f"{marker_line(1, 1)}\n{code}"


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    yield k
    k.close()


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_check_gives_each_public_check_the_graders_verdict(exercise_id):
    kernel = Kernel()  # one per exercise: a wrong answer's side effects stay in its exercise
    try:
        kernel.run("import torch")
        disagree = {}
        for name, code in catalogue(exercise_id).items():
            cell = as_answer_cell(code)
            kernel.run(cell)
            seen = kernel.verdict(exercise_id)
            graded = grade_code(exercise_id, notebook_code([cell]), public_only=True)  # the visible checks
            if seen["checks"] != public_verdicts(graded) and not seen["notes"]:
                disagree[name] = (seen, public_verdicts(graded))
        assert not disagree, disagree
    finally:
        kernel.close()


@pytest.mark.parametrize("exercise_id", ["residual_add", "inplace_dropout"])
def test_in_chinese_check_says_what_the_grader_says(exercise_id, monkeypatch):
    """In Chinese as in English: the kernel speaks Chinese (COURSE_LANGUAGE, as a Chinese notebook's setup cell
    sets it), and for every entry of the catalogue check() gives each public check the grader's verdict, in the
    grader's own (Chinese) words."""
    monkeypatch.setenv("COURSE_LANGUAGE", "zh")
    kernel = Kernel()  # the kernel inherits the language
    try:
        kernel.run("import torch")
        disagree, said = {}, []
        for name, code in catalogue(exercise_id).items():
            cell = as_answer_cell(code)
            kernel.run(cell)
            seen = kernel.verdict(exercise_id)
            graded = grade_code(exercise_id, notebook_code([cell]), public_only=True)
            if seen["notes"]:
                continue
            if seen["checks"] != public_verdicts(graded):
                disagree[name] = (seen["checks"], public_verdicts(graded))
            for t in graded.tests:
                if t.visibility == "visible" and t.status.value == "failed" and not t.trial:
                    if seen["outputs"].get(t.name) != t.output:
                        disagree[f"{name}: {t.name}"] = (seen["outputs"].get(t.name), t.output)
                    said.append(t.output)
        assert not disagree, disagree
        assert said and all(re.search(r"[\u4e00-\u9fff]", text) for text in said if text), said[:5]
    finally:
        kernel.close()


RESIDUAL = "residual_add"
SOLUTION = solution_code(RESIDUAL)
IMPORTS = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
assert SOLUTION.startswith(IMPORTS)


def graded_notebook(tmp_path: Path, cells: list[tuple[str, bool]]):
    """The exercise notebook with these cells (source, is an answer cell) in place of its answer cell, graded
    as the grader grades a submission."""
    nb = nbformat.read(next(EXERCISE_NOTEBOOKS.glob(f"*_{RESIDUAL}.ipynb")), as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if is_answer_cell(c))
    made = [nbformat.v4.new_code_cell(source, metadata={"tags": ["answer"]} if answer else {})
            for source, answer in cells]
    nb.cells = [*nb.cells[:at], *made, *nb.cells[at + 1:]]
    path = tmp_path / f"{RESIDUAL}.ipynb"
    nbformat.write(nb, path)
    return grade_file(path, path.name, Settings(timeout=60), InProcessRunner())


VARIANTS = {  # name: (cells in the order the learner ran them, saved notebook's cells, words a note must say)
    "a helper in its own cell": (
        [IMPORTS + "def add(a, b):\n    return a + b\n",
         as_answer_cell(SOLUTION.replace("out = out + x", "out = add(out, x)"))],
        None, "`add` is defined outside an answer cell"),
    "imports in another cell": (
        [IMPORTS, as_answer_cell(SOLUTION[len(IMPORTS):])], None, "`nn` is defined outside an answer cell"),
    "a stale definition after a syntax error": (
        [as_answer_cell(SOLUTION), as_answer_cell(SOLUTION.replace("out = out + x", "out = out +"))], None, None),
    "a dataclass helper": (
        [as_answer_cell("import dataclasses\n\n\n@dataclasses.dataclass\nclass Scale:\n    factor: float = 1.0\n\n\n"
                        + SOLUTION.replace("out = out + x", "out = out * Scale().factor + x"))], None, None),
    "a wrong definition run after the answer": (
        [as_answer_cell(SOLUTION), known_submissions(RESIDUAL).broken], None, None),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_ways_a_kernel_and_the_grader_differed(kernel, tmp_path, variant):
    ran, _, note = VARIANTS[variant]
    kernel.run("get_ipython().history_manager.reset()")  # a fresh history, as after a kernel restart
    for cell in ran:
        kernel.run(cell)
    seen = kernel.verdict(RESIDUAL)
    saved = {}  # the notebook as saved: the last text of each cell, answer cells tagged
    for cell in ran:
        saved[cell.startswith("# Answer cell") or cell] = cell
    graded = graded_notebook(tmp_path, [(text, key is True) for key, text in saved.items()])
    assert seen["status"] == graded.status and seen["checks"] == public_verdicts(graded), (seen, graded.output)
    if note:
        assert any(note in n for n in seen["notes"]), seen["notes"]
    else:
        assert not seen["notes"], seen["notes"]


def test_check_prints_and_returns_nothing(kernel):
    kernel.run(as_answer_cell(SOLUTION))
    printed = kernel.run(f"from autograder import check\nvalue = check({RESIDUAL!r})\nprint('RETURNED', repr(value))")
    assert "Every check passed" in printed and "RETURNED None" in printed
    assert "Result(" not in printed and "TestResult(" not in printed
