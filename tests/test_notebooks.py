"""The notebooks: each failure cell raises the documented error, nothing else raises, the self-check says what it
should (full marks on a solution, 'not attempted' on an untouched exercise), and every notebook follows the
learning path by its cell tags: predict -> run the failure -> diagnose (the learner names the line, before any
tool names it) -> understand -> fix, with no fix shown or applied before the answer cell, and no release of
torch asserted."""

import ast
import re

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.assign import has_solution, setup_cell
from autograder.exercises import EXERCISES, get
from tests.conftest import EXERCISE_NOTEBOOKS, SOLUTIONS

# The exercise notebooks' failure cells are the solutions' own (assign copies them, and assign --check
# proves it); the book's build runs every exercise notebook (tests/test_book.py holds what that run raised), and
# test_grade_core proves an untouched one is "not attempted". So executing the solutions here is enough.
NOTEBOOKS = [("solution", path) for path in sorted(SOLUTIONS.glob("*.ipynb"))]
ALL = [*NOTEBOOKS, *(("exercise", path) for path in sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")))]

LOCATOR = re.compile(r"\b(explain|locate|culprit_for|suggest)\s*\(|diagnose\.reveal\s*\(|autograder\.blame|"
                     r"autograder blame")
"""A cell that runs the course's locator (or shows its suggestion): never before the learner's diagnosis."""
WHY = re.compile(r"^#+ .*\bwhy\b", re.IGNORECASE | re.MULTILINE)
"""The heading of the step that explains the failure: after the diagnosis."""
RELEASE_FORMS = re.compile(r"[Oo]utput \d+ of [A-Za-z]\w*(?!\w*\(Backward)|\bis being used\b|\bhas been used\b")
"""Wording that one release prints and another does not: an op clause's name (`Relu` in torch 2.13,
`ReluBackward0` before), `is being used` (2.13) or `has been used` (older). A check may accept both forms (a
regex with `(Backward0)?`, `(is being|has been)`), never assert one."""


def execute(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def errors(cell):
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


def text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def tagged(nb, tag):
    return [i for i, c in enumerate(nb.cells) if tag in tags(c)]


def path_by_tags(nb) -> dict[str, int]:
    """Where the learning path's steps are: the prediction, the failure cells, the first diagnosis, the answer
    cell that holds the fix (the last one). Raises AssertionError where the tags are out of order."""
    (predict,) = tagged(nb, "predict")
    failures, diagnoses, answers = tagged(nb, "raises-exception"), tagged(nb, "diagnose"), tagged(nb, "answer")
    assert failures and diagnoses and answers, "every notebook has failure, diagnose and answer cells"
    assert predict < failures[0] and failures[-1] < diagnoses[0] < answers[-1], (predict, failures, diagnoses,
                                                                                 answers)
    return {"predict": predict, "failure": failures[0], "diagnose": diagnoses[0], "answer": answers[-1]}


def code_lines(source: str) -> set[str]:
    """The statements of `source` that fit on one line, each without its comment and with single spaces; the
    short ones, definitions, imports and returns left out."""
    out = set()
    for line in source.splitlines():
        line = " ".join(line.split("#")[0].split())
        if len(line) < 12 or line.startswith(("def ", "class ", "import ", "from ", "return ")):
            continue
        try:
            ast.parse(line + " pass" if line.endswith(":") else line)  # a block's header counts too
        except SyntaxError:
            continue  # a part of a statement (`raise RuntimeError(`), not one
        out.add(line)
    return out


def fix_lines(solution) -> set[str]:
    """The lines of the answer cells' solution regions that the notebook's code before the prediction (the
    broken code, as given) does not already hold: what the fix writes."""
    given = set().union(*(code_lines(c.source) for c in solution.cells[:path_by_tags(solution)["predict"]]
                          if c.cell_type == "code"))
    regions = [m.group(0) for c in solution.cells if "answer" in tags(c) and has_solution(c.source)
               for m in re.finditer(r"### BEGIN SOLUTION.*?### END SOLUTION", c.source, re.DOTALL)]
    return set().union(*(code_lines(r) for r in regions)) - given


def test_every_exercise_has_both_notebooks():
    for exercise in EXERCISES.values():
        name = f"{exercise.number:02d}_{exercise.id}.ipynb"
        assert (SOLUTIONS / name).exists() and (EXERCISE_NOTEBOOKS / name).exists(), name


@pytest.mark.parametrize("kind, path", ALL, ids=[f"{k}-{p.stem}" for k, p in ALL])
def test_the_learning_path_holds_by_tags(kind, path):
    """predict -> the failure -> diagnose -> why -> the answer: nothing before the learner's diagnosis runs the
    locator or explains the failure, and every locator call before the answer shows no fix."""
    nb = nbformat.read(path, as_version=4)
    at = path_by_tags(nb)
    before = nb.cells[:at["diagnose"]]
    assert not [c.source[:80] for c in before if c.cell_type == "code" and LOCATOR.search(c.source)]
    assert not [c.source[:80] for c in before if c.cell_type == "markdown" and WHY.search(c.source)]
    assert any(c.cell_type == "markdown" and WHY.search(c.source) for c in nb.cells[at["diagnose"]:at["answer"]]), \
        "the failure is explained after the diagnosis, before the answer"
    for cell in nb.cells[:at["answer"]]:
        for call in re.findall(r"\bexplain\((?:[^()]|\([^()]*\))*\)", cell.source):
            assert "suggest=False" in call, call


@pytest.mark.parametrize("name", sorted(p.name for p in SOLUTIONS.glob("*.ipynb")))
def test_no_cell_before_the_answer_shows_or_applies_the_fix(name):
    """In the exercise notebook, no cell before the answer cell holds a line the solution's fix writes (and
    that the broken code did not already have): no code cell runs it, no markdown quotes it."""
    fixes = fix_lines(nbformat.read(SOLUTIONS / name, as_version=4))
    assert fixes, "the solution writes a fix"
    exercise = nbformat.read(EXERCISE_NOTEBOOKS / name, as_version=4)
    shown = set()
    for cell in exercise.cells[:path_by_tags(exercise)["answer"]]:
        if cell.cell_type == "code" and "answer" not in tags(cell):
            shown |= code_lines(cell.source) & fixes
        elif cell.cell_type == "markdown":
            quoted = re.findall(r"`([^`]+)`", cell.source.replace("```", ""))
            shown |= {" ".join(q.split()) for q in quoted} & fixes
    assert not shown, shown


@pytest.mark.parametrize("kind, path", ALL, ids=[f"{k}-{p.stem}" for k, p in ALL])
def test_no_notebook_asserts_a_release(kind, path):
    """Colab runs the newest torch: a notebook asserts no version of torch, and no wording that only one release
    prints (it accepts each form, or reads the message's parts with autograder.core.messages)."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code" or cell.source == setup_cell().source:
            continue  # the setup cell says which torch the course was checked on, and asserts nothing
        source = re.sub(r"^%%.*$", "", cell.source, flags=re.MULTILINE)  # a cell magic's line is not Python
        assert "__version__" not in source and "torch.version." not in source, cell.source[:200]
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Assert):
                continue
            literals = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            worded = [s for s in literals if RELEASE_FORMS.search(s)]
            assert not worded, f"{path.name}: an assert on one release's wording: {worded}"


def test_the_release_scan_finds_what_it_looks_for():
    for said in ('"which is output 0 of Relu, is at version 1"', '"a leaf Variable that requires grad is being used"',
                 '"Output 0 of Split is a view"'):
        assert RELEASE_FORMS.search(said), said
    for said in (r'r"Output 0 of Split(Backward0)? is a view"', r'"(is being|has been) used"', '"Relu"'):
        assert not RELEASE_FORMS.search(said), said


@pytest.mark.slow
@pytest.mark.parametrize("kind, path", NOTEBOOKS, ids=[f"{k}-{p.stem}" for k, p in NOTEBOOKS])
def test_notebook_raises_exactly_the_documented_error(kind, path):
    nb = execute(path)
    exercise = get(nb.metadata["autograder"]["exercise"])
    failure_cells = [c for c in nb.cells if c.cell_type == "code" and "raises-exception" in tags(c)]
    assert failure_cells, "every notebook reproduces its failure first"
    for cell in failure_cells:
        (error,) = errors(cell)
        assert exercise.failure.matches(error.ename, error.evalue), f"{error.ename}: {error.evalue[:300]}"
    for cell in nb.cells:
        if cell.cell_type == "code" and "raises-exception" not in tags(cell):
            assert not errors(cell), f"unexpected error in a cell of {path.name}: {errors(cell)[0].evalue[:300]}"
    report = next(text(c) for c in nb.cells if c.cell_type == "code" and 'check("' in c.source)
    assert "Every check passed" in report, report
    predicted_then_diagnosed(nb)


def predicted_then_diagnosed(nb):
    """The prediction comes right before the failure cell, and nothing above that cell quotes the versions; the
    verdict comes right after it, and the solution's prediction is what happened (every part it gave, right).
    The diagnosis is checked by the code cell right after it, and the solution's is right in every part."""
    at = path_by_tags(nb)
    assert at["predict"] == at["failure"] - 1
    assert not any("expected version" in c.source for c in nb.cells[:at["failure"]] if c.cell_type == "markdown")
    assert nb.cells[at["failure"] + 1].source.strip() == "predict.reveal()"
    verdict = re.search(r"(\d+) of (\d+) predicted parts right\.", text(nb.cells[at["failure"] + 1]))
    assert verdict and verdict[1] == verdict[2] != "0", text(nb.cells[at["failure"] + 1])
    diagnosis = nb.cells[at["diagnose"]]
    assert re.search(r"^\s*diagnose\(", diagnosis.source, re.MULTILINE) and "Diagnosis noted" in text(diagnosis)
    check = nb.cells[at["diagnose"] + 1]
    assert "diagnose.reveal(" in check.source
    verdict = re.search(r"(\d+) of (\d+) diagnosed parts right\.", text(check))
    assert verdict and verdict[1] == verdict[2] != "0", text(check)
    assert "How to fix" not in text(check) and "Suggested rewrite" not in text(check)


@pytest.mark.parametrize("path", sorted(EXERCISE_NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_exercise_notebooks_hide_the_solution(path):
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "### BEGIN SOLUTION" not in source and "### END SOLUTION" not in source
    assert not any("solution-only" in tags(c) for c in nb.cells)
    assert any("answer" in tags(c) and "NotImplementedError" in c.source for c in nb.cells)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    for i in tagged(nb, "diagnose"):  # the learner's diagnosis starts blank
        call = re.search(r"diagnose\((.*?)\)\s*$", nb.cells[i].source, re.DOTALL)
        assert call and set(re.findall(r"=\s*([^,\s)]+)", call[1])) == {"..."}, nb.cells[i].source
