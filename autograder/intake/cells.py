"""How a notebook's answer cells become the one program the grader runs, and how a learner's kernel finds them.

Free of torch and nbformat: the grader's side (submission.py), the worker's (harness.py, which runs the cells
one by one) and the notebook's check() (selfcheck.py) share it.
"""

from __future__ import annotations

import re

_IPYTHON_SYNTAX = re.compile(r"^\s*[%!]|\?\s*$", re.MULTILINE)
"""A line that may be IPython's own syntax (a magic, a shell escape, `name?`): only then is IPython asked."""
CELL_BREAK = "# (next answer cell)"
"""The line between two answer cells in the graded code (where one blank line would be): the harness runs each
cell on its own, as Jupyter does, so that a cell may start with `from __future__ import ...`."""
ANSWER_MARKER = re.compile(r"^#\s*Answer cell(?: (?P<n>\d+) of (?P<total>\d+))? \(graded\)", re.IGNORECASE)
"""The first line `autograder assign` gives every answer cell: the notebook's check() finds the answer cells
the learner ran by it (a kernel knows the text of the cells it ran, not their tags)."""


def marker_line(n: int, total: int) -> str:
    """The first line of answer cell `n` of `total` (ANSWER_MARKER): it also tells the learner the rule."""
    which = f" {n} of {total}" if total > 1 else ""
    return (f"# Answer cell{which} (graded): the grader runs only the answer cells, on their own, so keep your "
            "imports and helpers in them.")


def last_run_answers(history: list[str]) -> dict[int, str]:
    """The text each answer cell had when the learner last ran it, by its number, from a kernel's inputs in the
    order they ran (IPython's raw input history)."""
    found: dict[int, str] = {}
    for cell in history:
        marked = ANSWER_MARKER.match(cell.lstrip("\n"))
        if marked:
            found[int(marked["n"] or 1)] = cell
    return found


def notebook_code(cells: list[str]) -> str:
    """The graded code of these answer cells: each as Python (python_of_cell), joined by CELL_BREAK lines."""
    return f"\n{CELL_BREAK}\n".join(python_of_cell(cell) for cell in cells)


def python_of_cell(cell: str) -> str:
    """A notebook cell as the Python Jupyter runs: IPython's own syntax (`%magic`, `!shell`, `name?`) becomes the
    calls IPython makes of it (the grader's stand-in `get_ipython()` answers them, harness.py), exactly where
    IPython sees it (`!=` at the start of a continued line stays a comparison). Line numbers are kept."""
    if not _IPYTHON_SYNTAX.search(cell):
        return cell
    from IPython.core.inputtransformer2 import TransformerManager  # 0.2 s: only for cells that may need it

    try:
        python = TransformerManager().transform_cell(cell)
    except Exception:  # noqa: BLE001 - what IPython cannot read, Python will say why (a SyntaxError)
        return cell
    if python.endswith("\n") and not cell.endswith("\n"):
        python = python[:-1]
    missing = cell.count("\n") - python.count("\n")  # a cell magic becomes one line: pad to keep line numbers
    return python + "\n" * missing if missing > 0 else python
