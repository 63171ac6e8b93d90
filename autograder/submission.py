"""Submissions (.ipynb or .py) -> the answer code to grade, with a clear error for files that can't be."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

ANSWER_TAG = "answer"
"""Code cells carrying this tag are the graded ones (the exercise notebooks mark them)."""

_MAGIC = re.compile(r"^(\s*)([%!].*)$", re.MULTILINE)


class SubmissionError(Exception):
    """A file that cannot be graded; its message is shown to the student as the verdict."""


@dataclass(frozen=True)
class Answer:
    path: str
    code: str
    exercise: str | None  # from the notebook's metadata, when it says


def is_answer_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and ANSWER_TAG in cell.get("metadata", {}).get("tags", [])


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """Reads and validates a notebook, turning every way it can be broken into a SubmissionError."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(f"{path.name} is not a text file (it is not UTF-8).") from None
    if not text.strip():
        raise SubmissionError(f"{path.name} is empty.")
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise SubmissionError(
            f"{path.name} is not valid notebook JSON (line {e.lineno}, column {e.colno}: {e.msg}). "
            "Was it edited in a text editor or truncated? Download it again from Jupyter."
        ) from None
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises several types for a file that is JSON but not a notebook
        raise SubmissionError(f"{path.name} is JSON but not a valid notebook: {str(e).splitlines()[0]}") from None
    return nb


def answer_code(path: str | Path) -> Answer:
    """The graded code of a submission: its answer cells, or the whole of a .py file."""
    path = Path(path)
    if path.suffix == ".py":
        try:
            return Answer(str(path), path.read_text(encoding="utf-8"), None)
        except UnicodeDecodeError:
            raise SubmissionError(f"{path.name} is not a UTF-8 text file.") from None
    if path.suffix != ".ipynb":
        raise SubmissionError(f"{path.name}: a submission is a .ipynb notebook or a .py file.")
    nb = read_notebook(path)
    if not nb.cells:
        raise SubmissionError(f"{path.name} has no cells.")
    cells = [c for c in nb.cells if is_answer_cell(c)]
    if not cells:
        raise SubmissionError(
            f"{path.name} has no answer cells (code cells tagged '{ANSWER_TAG}'). The tags may have been "
            "lost by copying cells into a new notebook: start again from the exercise notebook and paste "
            "your code into its answer cells."
        )
    exercise = nb.metadata.get("autograder", {}).get("exercise")
    code = "\n\n".join(_MAGIC.sub(r"\1# (notebook magic, not graded) \2", c.source) for c in cells)
    return Answer(str(path), code, exercise)
