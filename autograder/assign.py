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

from .intake.cells import ANSWER_MARKER, marker_line
from .intake.files import write_atomically
from .intake.submission import is_answer_cell
from .settings import TORCH_RELEASES

SOLUTION_ONLY_TAG = "solution-only"
PREDICT_TAG = "predict"
DIAGNOSE_TAG = "diagnose"
_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN (?P<kind>SOLUTION|HIDDEN)[^\n]*\n(?P<body>.*?)^[ \t]*### END (?P=kind)[^\n]*(\n|$)",
    re.MULTILINE | re.DOTALL,
)
TODO = ("{indent}# TODO: your fix goes here (see the task above).\n"
        "{indent}raise NotImplementedError(\"TODO: replace this line with your fix\")\n")


SETUP_TAG = "setup"
SETUP = """\
# Setup: on Colab or Binder this installs the course's checker (keeping this notebook's torch) and says which
# torch the course was checked on; where the course is installed, it only checks the torch.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("autograder") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", {needs}], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "{requirement}"], check=True)
import torch

if not torch.__version__.startswith({prefixes}):
    print("Note: this course was checked on torch {checked}; this notebook runs torch", torch.__version__ + ".",
          "Error messages may be worded a little otherwise (the notebooks accept the known forms).")"""


def repository() -> str:
    """The course's public repository, as pyproject.toml's [project.urls] gives it (one source of truth)."""
    for entry in metadata.metadata("inplace-autograd-course").get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip() == "Repository":
            return url.strip()
    raise AssignError("pyproject.toml has no [project.urls] Repository")


def needs() -> list[str]:
    """The course's own dependencies but torch, as its package metadata lists them (no extra's)."""
    found = []
    for requirement in metadata.requires("inplace-autograd-course") or []:
        name, _, marker = requirement.partition(";")
        if "extra" not in marker and not re.match(r"torch\b", name.strip()):
            found.append(name.strip())
    return found


def setup_cell(repository_url: str | None = None) -> nbformat.NotebookNode:
    """The first code cell: the course from `repository_url` (default: this course's own repository)."""
    requirement = f"inplace-autograd-course @ git+{repository_url or repository()}"
    minors = [".".join(release.split(".")[:2]) for release in TORCH_RELEASES]
    source = SETUP.format(requirement=requirement, needs=", ".join(f'"{n}"' for n in needs()),
                          checked=" and ".join(minors), prefixes=repr(tuple(minors)))
    return nbformat.v4.new_code_cell(source, metadata={"tags": [SETUP_TAG]})


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


def marked(source: str, n: int, total: int) -> str:
    """An answer cell's source with its marker as first line (cells.ANSWER_MARKER), once."""
    body = source.split("\n", 1)[1] if ANSWER_MARKER.match(source) else source
    return f"{marker_line(n, total)}\n{body}"


def exercise_notebook(solution: nbformat.NotebookNode, repository_url: str | None = None) -> nbformat.NotebookNode:
    """The student's notebook made from a solution notebook (its setup cell installing from `repository_url`)."""
    nb = copy.deepcopy(solution)
    answers = [c for c in nb.cells if is_answer_cell(c)]
    for n, cell in enumerate(answers, 1):
        cell.source = marked(cell.source, n, len(answers))
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
    setup = setup_cell(repository_url)
    setup.id = "setup"  # stable, so that regenerating gives the same file
    nb.cells = [*cells[:1], setup, *cells[1:]]  # after the title, before any code
    return nb


@dataclass(frozen=True)
class Drift:
    path: Path
    reason: str


def assign(solutions: Path, exercises: Path, check: bool = False, only: tuple[str, ...] = ()) -> list[Drift]:
    """Writes (or, with check, compares) exercises/NN_<id>.ipynb for every solution notebook (of the exercises
    `only` names, where it names some)."""
    drifts = []
    sources = sorted(solutions.glob("*.ipynb"))
    if not sources:
        raise AssignError(f"no solution notebooks in {solutions}")
    if only:
        named = {src: src.stem.split("_", 1)[-1] for src in sources}
        unknown = sorted(set(only) - set(named.values()))
        if unknown:
            raise AssignError(f"no solution notebook for {', '.join(unknown)} in {solutions}")
        sources = [src for src in sources if named[src] in only]
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
    if check and not only:
        expected = {s.name for s in sources}
        drifts += [Drift(p, "has no solution notebook") for p in sorted(exercises.glob("*.ipynb"))
                   if p.name not in expected]
    return drifts


def _end(position: int | None) -> int:
    """An end position ast gives every expression it parsed (None only for nodes made by hand)."""
    if position is None:
        raise AssignError("a predict(...) argument without a position")
    return position
