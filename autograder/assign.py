"""solutions/ -> exercises/: answers become TODOs, solution-only material is removed.

Markers, as nbgrader spells them: in a code cell, the lines between `### BEGIN SOLUTION` and
`### END SOLUTION` become a TODO that raises NotImplementedError, at the marker's indentation; lines
between `### BEGIN HIDDEN` and `### END HIDDEN` are dropped; a cell tagged `solution-only` (the
"why this works" note) is dropped whole. In a cell tagged `predict` (or `diagnose`), the arguments of its
`predict(...)` (or `diagnose(...)`) call (the solution's answer, which the solution's run proves right)
become `...`, the placeholders the student fills in. Outputs are cleared. A setup cell goes first: on Colab
or Binder, where the course is not installed, it installs it from the repository so that `check()` works.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import nbformat

from .files import write_atomically

SOLUTION_ONLY_TAG = "solution-only"
PREDICT_TAG = "predict"
DIAGNOSE_TAG = "diagnose"
_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN (?P<kind>SOLUTION|HIDDEN)[^\n]*\n(?P<body>.*?)^[ \t]*### END (?P=kind)[^\n]*(\n|$)",
    re.MULTILINE | re.DOTALL,
)
TODO = "{indent}# TODO: your fix goes here (see the task above).\n{indent}raise NotImplementedError(\"TODO: replace this line with your fix\")\n"


SETUP_TAG = "setup"
SETUP = """\
# Setup: on Colab or Binder this installs the course's checker; where it is installed, it does nothing.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("autograder") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "{requirement}"], check=True)"""


def repository() -> str:
    """The course's public repository, as pyproject.toml's [project.urls] gives it (one source of truth)."""
    for entry in metadata.metadata("inplace-autograd-course").get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip() == "Repository":
            return url.strip()
    raise AssignError("pyproject.toml has no [project.urls] Repository")


def setup_cell() -> nbformat.NotebookNode:
    requirement = f"inplace-autograd-course @ git+{repository()}"
    return nbformat.v4.new_code_cell(SETUP.format(requirement=requirement), metadata={"tags": [SETUP_TAG]})


class AssignError(Exception):
    """A solution notebook that does not follow the marker conventions."""


def strip_solutions(source: str) -> str:
    """The cell source a student gets."""
    def replace(m: re.Match[str]) -> str:
        return TODO.format(indent=m.group("indent")) if m.group("kind") == "SOLUTION" else ""

    out = _REGION.sub(replace, source)
    if "### BEGIN" in out or "### END" in out:
        raise AssignError("unbalanced ### BEGIN / ### END marker")
    return out


def blank_prediction(source: str, name: str = PREDICT_TAG) -> str:
    """A `predict` (or `diagnose`) cell as the student gets it: every argument of its `predict(...)` call becomes
    `...`."""
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and (getattr(n.func, "id", None) == name or getattr(n.func, "attr", None) == name)]
    if len(calls) != 1 or calls[0].args or not calls[0].keywords:
        raise AssignError(f"a cell tagged '{name}' holds one {name}(...) call, with keyword arguments only")
    data = source.encode()
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    values = [k.value for k in calls[0].keywords]
    spans = [(starts[v.lineno - 1] + v.col_offset, starts[_end(v.end_lineno) - 1] + _end(v.end_col_offset))
             for v in values]
    for begin, end in sorted(spans, reverse=True):  # ast's offsets count UTF-8 bytes
        data = data[:begin] + b"..." + data[end:]
    return data.decode()


def has_solution(source: str) -> bool:
    return any(m.group("kind") == "SOLUTION" for m in _REGION.finditer(source))


def exercise_notebook(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student's notebook made from a solution notebook."""
    nb = copy.deepcopy(solution)
    cells = []
    for cell in nb.cells:
        if SOLUTION_ONLY_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            for tag in (PREDICT_TAG, DIAGNOSE_TAG):
                if tag in cell.get("metadata", {}).get("tags", []):
                    cell.source = blank_prediction(cell.source, tag)
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    setup = setup_cell()
    setup.id = "setup"  # stable, so that regenerating gives the same file
    nb.cells = [*cells[:1], setup, *cells[1:]]  # after the title, before any code
    return nb


@dataclass(frozen=True)
class Drift:
    path: Path
    reason: str


def assign(solutions: Path, exercises: Path, check: bool = False) -> list[Drift]:
    """Writes (or, with check, compares) exercises/NN_<id>.ipynb for every solution notebook."""
    drifts = []
    sources = sorted(solutions.glob("*.ipynb"))
    if not sources:
        raise AssignError(f"no solution notebooks in {solutions}")
    for src in sources:
        solution = nbformat.read(src, as_version=4)
        if not any(c.cell_type == "code" and has_solution(c.source) for c in solution.cells):
            raise AssignError(f"{src.name} has no ### BEGIN SOLUTION region")
        text = nbformat.writes(exercise_notebook(solution)) + "\n"
        target = exercises / src.name
        if check:
            if not target.exists():
                drifts.append(Drift(target, "missing"))
            elif target.read_text(encoding="utf-8") != text:
                drifts.append(Drift(target, f"differs from what {src.name} generates"))
        else:
            write_atomically(target, text)
    if check:
        expected = {s.name for s in sources}
        drifts += [Drift(p, "has no solution notebook") for p in sorted(exercises.glob("*.ipynb")) if p.name not in expected]
    return drifts


def _end(position: int | None) -> int:
    """An end position ast gives every expression it parsed (None only for nodes made by hand)."""
    if position is None:
        raise AssignError("a predict(...) argument without a position")
    return position
