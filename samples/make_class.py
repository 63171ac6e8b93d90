"""Writes samples/class/: a small class of submissions for the demo and the end-to-end tests.

Each student hands in all seven exercise notebooks, filled in from the tests' catalogue of fixes:
ada the solutions, bob nothing (untouched), cleo the original broken code, dan a tempting wrong fix,
eve a correct alternative, and frank every way a file can be broken. Run from the repository root:
`.venv/bin/python samples/make_class.py` (the output is committed; rerun it when exercises change).
"""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CLASS = ROOT / "samples" / "class"

from autograder.exercises import EXERCISES  # noqa: E402
from autograder.submission import is_answer_cell  # noqa: E402
from tests.conftest import solution_code  # noqa: E402


def filled(exercise_notebook: Path, code: str) -> nbformat.NotebookNode:
    """The exercise notebook with its (single) answer cell replaced by `code`."""
    nb = nbformat.read(exercise_notebook, as_version=4)
    answers = [c for c in nb.cells if is_answer_cell(c)]
    answers[0].source = code.strip() + "\n"
    for extra in answers[1:]:
        extra.source = ""
    return nb


def frank(number: int, nb: nbformat.NotebookNode, path: Path) -> None:
    """One broken file per exercise: each must get its own verdict without stopping the batch."""
    kind = number % 7
    if kind == 1:
        path.write_text(nbformat.writes(nb)[: 200])  # truncated JSON
        return
    if kind == 2:
        for cell in nb.cells:
            cell.metadata.pop("tags", None)  # pasted into a fresh notebook: answer tags lost
    answer = next((c for c in nb.cells if is_answer_cell(c)), None)
    if kind == 3:
        answer.source = answer.source.replace("):", ")", 1)  # a syntax error
    elif kind == 4:
        answer.source = "import torch  # forgot to define anything\n"
    elif kind == 5:
        answer.source = 'print(\'{"score": 10, "max_score": 10}\')\nimport os\nos._exit(0)\n'
    elif kind == 6:
        answer.source = "import torch\n\ndef normalized_linear(x):\n    return x\n"  # wrong signature
    elif kind == 0:
        path.write_text("")  # an empty file
        return
    nbformat.write(nb, path)


def main() -> None:
    shutil.rmtree(CLASS, ignore_errors=True)
    for student in ("ada", "bob", "cleo", "dan", "eve", "frank"):
        (CLASS / student).mkdir(parents=True)
    for exercise in EXERCISES.values():
        name = f"{exercise.number:02d}_{exercise.id}.ipynb"
        notebook = ROOT / "exercises" / name
        catalogue = importlib.import_module(f"tests.exercises.test_{exercise.id}")
        nbformat.write(filled(notebook, solution_code(exercise.id)), CLASS / "ada" / name)
        shutil.copy(notebook, CLASS / "bob" / name)
        nbformat.write(filled(notebook, catalogue.BROKEN), CLASS / "cleo" / name)
        wrong = sorted(catalogue.WRONG)[0]
        nbformat.write(filled(notebook, catalogue.WRONG[wrong][0]), CLASS / "dan" / name)
        right = sorted(catalogue.CORRECT)[0]
        nbformat.write(filled(notebook, catalogue.CORRECT[right]), CLASS / "eve" / name)
        frank(exercise.number, filled(notebook, solution_code(exercise.id)), CLASS / "frank" / name)
    print(f"wrote {sum(1 for _ in CLASS.rglob('*.ipynb'))} submissions under {CLASS}")


if __name__ == "__main__":
    main()
