"""Writes samples/class/: a small class of submissions for the demo and the end-to-end tests.

Each student hands in every exercise's notebook (the exercises are the registry's, autograder.exercises),
filled in from the exercise's solution notebook and its catalogue of known submissions (references/<id>.py):
ada the solutions, bob nothing (untouched), cleo the original broken code, dan a tempting wrong fix,
eve a correct alternative, and frank every way a file can be broken (FRANK). Run from the repository root:
`.venv/bin/python samples/make_class.py` (the output is committed; rerun it when exercises change).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed
CLASS = ROOT / "samples" / "class"
STUDENTS = ("ada", "bob", "cleo", "dan", "eve", "frank")

from autograder.core.spec import Exercise  # noqa: E402
from autograder.exercises import EXERCISES  # noqa: E402
from autograder.intake.submission import answer_code, is_answer_cell  # noqa: E402
from autograder.reference_store import known_submissions  # noqa: E402


def filled(exercise_notebook: Path, code: str) -> nbformat.NotebookNode:
    """The exercise notebook with its (single) answer cell replaced by `code`."""
    nb = nbformat.read(exercise_notebook, as_version=4)
    answers = [c for c in nb.cells if is_answer_cell(c)]
    answers[0].source = code.strip() + "\n"
    for extra in answers[1:]:
        extra.source = ""
    return nb


def _answer(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if is_answer_cell(c))


def _truncated(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    path.write_text(nbformat.writes(nb)[:200])


def _tags_lost(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    for cell in nb.cells:
        cell.metadata.pop("tags", None)  # pasted into a fresh notebook: answer tags lost
    nbformat.write(nb, path)


def _syntax_error(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    answer = _answer(nb)
    answer.source = answer.source.replace("):", ")", 1)
    nbformat.write(nb, path)


def _defines_nothing(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    _answer(nb).source = "import torch  # forgot to define anything\n"
    nbformat.write(nb, path)


def _fakes_a_score(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    _answer(nb).source = 'print(\'{"score": 10, "max_score": 10}\')\nimport os\nos._exit(0)\n'
    nbformat.write(nb, path)


def _wrong_signature(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    symbol = exercise.defines[0]
    params = symbol.params[:-1]  # one parameter too few
    if symbol.kind == "class":
        code = f"class {symbol.name}:\n    def __init__({', '.join(('self', *params))}):\n        pass\n"
    else:
        code = f"def {symbol.name}({', '.join(params)}):\n    return {params[0] if params else None}\n"
    _answer(nb).source = "import torch\n\n" + code
    nbformat.write(nb, path)


def _empty(exercise: Exercise, nb: nbformat.NotebookNode, path: Path) -> None:
    path.write_text("")


class Breakage(NamedTuple):
    what: str
    verdict: str  # the status `autograder grade` must give it (tests/test_sample_class.py checks)
    write: Callable[[Exercise, nbformat.NotebookNode, Path], None]


FRANK = (
    Breakage("an empty file", "malformed", _empty),
    Breakage("truncated JSON", "malformed", _truncated),
    Breakage("the answer tags lost", "malformed", _tags_lost),
    Breakage("a syntax error", "malformed", _syntax_error),
    Breakage("defines nothing", "failed", _defines_nothing),
    Breakage("prints a full score and exits", "crashed", _fakes_a_score),
    Breakage("the wrong signature", "failed", _wrong_signature),
)
"""frank's files, one per exercise: exercise number n gets FRANK[n % len(FRANK)]. Each must get its own
verdict without stopping the batch."""


def frank_breakage(exercise: Exercise) -> Breakage:
    return FRANK[exercise.number % len(FRANK)]


def write_class(out: Path) -> int:
    """Writes the class under `out` (emptied first); returns how many submissions it wrote."""
    shutil.rmtree(out, ignore_errors=True)
    for student in STUDENTS:
        (out / student).mkdir(parents=True)
    for exercise in EXERCISES.values():
        name = f"{exercise.number:02d}_{exercise.id}.ipynb"
        notebook = ROOT / "exercises" / name
        solution = answer_code(ROOT / "solutions" / name).code
        known = known_submissions(exercise.id)
        nbformat.write(filled(notebook, solution), out / "ada" / name)
        shutil.copy(notebook, out / "bob" / name)
        nbformat.write(filled(notebook, known.broken), out / "cleo" / name)
        nbformat.write(filled(notebook, known.wrong[sorted(known.wrong)[0]][0]), out / "dan" / name)
        nbformat.write(filled(notebook, known.correct[sorted(known.correct)[0]]), out / "eve" / name)
        frank_breakage(exercise).write(exercise, filled(notebook, solution), out / "frank" / name)
    return sum(1 for _ in out.rglob("*.ipynb"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CLASS, help="where to write the class (default: samples/class)")
    out = parser.parse_args(argv).out
    print(f"wrote {write_class(out)} submissions under {out}")


if __name__ == "__main__":
    main()
