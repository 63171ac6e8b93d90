"""How a notebook's answer cells become the one program the grader runs, and how a learner's kernel finds them.

Free of torch and nbformat: the grader's side (submission.py), the worker's (harness.py, which runs the cells
one by one) and the notebook's check() (selfcheck.py) share it.
"""

from __future__ import annotations

import re

_IPYTHON_SYNTAX = re.compile(r"^[^\S\n]*[%!]|=[^\S\n]*[%!]|\?[^\S\n]*$", re.MULTILINE)
"""A line that may be IPython's own syntax (a magic, a shell escape, `x = %magic`, `x = !shell`, `name?`): only
then is IPython asked. Its whitespace never crosses a line (`\\s*` would: quadratic in a run of blank lines),
so one search is linear."""
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
    """The graded code of these answer cells: each as written, joined by CELL_BREAK lines. Nothing here reads
    them: IPython's syntax is turned into Python (python_of_cell) by the harness, cell by cell, where the answer
    runs (in a worker: inside the sandbox, under the job's time limit), since IPython's transformer costs time
    quadratic in a cell's magics (300 `%time` lines: minutes)."""
    return f"\n{CELL_BREAK}\n".join(cells)


def may_be_ipython(cell: str) -> bool:
    """Whether a line of the cell may be IPython's own syntax (a magic, a shell escape, `name?`). Linear."""
    return _IPYTHON_SYNTAX.search(cell) is not None


def python_of_cell(cell: str) -> str:
    """A notebook cell as the Python Jupyter runs: IPython's own syntax (`%magic`, `!shell`, `name?`) becomes the
    calls IPython makes of it (the grader's stand-in `get_ipython()` answers them, harness.py), exactly where
    IPython sees it (`!=` at the start of a continued line stays a comparison). Line numbers are kept: the blank
    lines IPython drops ahead of a cell are put back, and a cell magic (one line) is padded to its length.

    IPython's transformer tokenizes the whole cell again after each piece of syntax it turns: its cost is
    quadratic in a cell's magics. The grader's own process never calls this on a submission: the harness
    does, where the answer runs (in a worker, inside the sandbox, under the job's time limit)."""
    if not may_be_ipython(cell):
        return cell
    from IPython.core.inputtransformer2 import TransformerManager  # 0.2 s: only for cells that may need it

    try:
        python = TransformerManager().transform_cell(cell)
    except Exception:  # noqa: BLE001 - what IPython cannot read, Python will say why (a SyntaxError)
        return cell
    if python.endswith("\n") and not cell.endswith("\n"):
        python = python[:-1]
    lines = cell.split("\n")
    dropped = next((i for i, line in enumerate(lines) if line and not line.isspace()), 0)  # as IPython drops them
    python = "\n" * dropped + python
    missing = cell.count("\n") - python.count("\n")  # a cell magic becomes one line: pad to keep line numbers
    return python + "\n" * missing if missing > 0 else python


def cell_magic(cell: str) -> tuple[str, str, str] | None:
    """(name, the rest of its line, its body) of a cell that is a cell magic (`%%time`, `%%capture out`, ...),
    as IPython tells one (its first line that is not blank starts with `%%`); None for any other cell."""
    lines = cell.split("\n")
    at = next((i for i, line in enumerate(lines) if line and not line.isspace()), None)
    if at is None or not lines[at].startswith("%%"):
        return None
    name, _, rest = lines[at].strip()[2:].partition(" ")
    return name, rest, "\n".join(lines[at + 1:])
