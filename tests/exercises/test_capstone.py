"""capstone: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/capstone.py, and tests/exercises/test_catalogue.py grades every entry."""

import json
from pathlib import Path

import nbformat
import pytest

from autograder.assign import exercise_notebook
from autograder.exercises import capstone
from autograder.exercises.capstone import normalized
from autograder.intake.submission import is_answer_cell
from autograder.public import paths
from autograder.reference_store import known_submissions, load_reference
from tests.conftest import SOLUTIONS, failing, solution_code

ID = "capstone"
KNOWN = known_submissions(ID)
SCRIPT = KNOWN.broken  # the given script: BROKEN is the script exactly as the learner gets it
WRITES = load_reference(ID)["in_place_writes"]()  # each in-place line of the script: what it does
(RAISING,) = [line for line, verdict in WRITES.items() if verdict == "raises"]
(SILENT,) = [line for line, verdict in WRITES.items() if verdict == "silently wrong"]
FIXED_RAISING = "p = p / p.sum(dim=1, keepdim=True)"
FIXED_SILENT = "h = h / h.norm(dim=1, keepdim=True)"


def output(result, check):
    return next(t.output for t in result.tests if t.name == check)


def solution_notebook():
    (path,) = SOLUTIONS.glob(f"*_{ID}.ipynb")
    return nbformat.read(path, as_version=4)


def test_each_classified_line_is_one_line_of_the_script_and_every_write_is_classified():
    lines = [line.strip() for line in SCRIPT.splitlines()]
    assert all(lines.count(line) == 1 for line in WRITES)
    writes = [line for line in lines if any(op in line.split("#")[0] for op in (" -= ", " /= ", "clamp_("))]
    assert sorted(writes) == sorted(WRITES) and len(WRITES) == 6
    assert sorted(WRITES.values()).count("harmless") == 4


@pytest.mark.parametrize("notebook", ["solution", "starter"])
def test_the_notebook_writes_the_catalogues_script(notebook):
    nb = solution_notebook() if notebook == "solution" else exercise_notebook(solution_notebook())
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%writefile")]
    assert cell.source.split("\n", 1)[1] + "\n" == SCRIPT


def test_the_starter_does_not_point_at_the_bugs():
    """The starter's answer cells are the grader's names with every body a TODO: no line of them tells which
    lines were wrong (nor how they were fixed); the six lines are listed for the classification, no verdict."""
    starter = exercise_notebook(solution_notebook())
    answers = [c.source for c in starter.cells if is_answer_cell(c)]
    assert len(answers) == 2  # the classification, before any tool runs, and the fixed script
    for answer in answers:
        for text in (RAISING, SILENT, FIXED_RAISING, FIXED_SILENT, "p /=", ".data", "h.norm", "p.sum"):
            assert text not in answer, text
    readable = "\n".join(c.source for c in starter.cells)  # nor does any other cell, before the learner runs it
    for text in (FIXED_RAISING, FIXED_SILENT):
        assert text not in readable, text
    for line in WRITES:  # the script's own line, and the classification's list of lines
        assert readable.count(line) == 2, line


def test_nothing_installed_holds_the_named_lines():
    """Neither the public data nor the exercise's module (both installed with the package) says which lines."""
    json_path, _ = paths(ID)
    shipped = json_path.read_text()
    for line in (RAISING, SILENT, normalized(RAISING), normalized(SILENT)):
        assert json.dumps(line)[1:-1] not in shipped
    module = Path(capstone.__file__).read_text()
    for text in (RAISING, SILENT, FIXED_RAISING, FIXED_SILENT, "p /=", ".data /="):
        assert text not in module, text


def test_the_broken_script_names_its_culprit(grade):
    result = grade(ID, SCRIPT)
    assert result.score == 0 and {"trains", "the two bugs", "the harmless writes"} <= failing(result)
    trains = output(result, "trains")
    assert "modified by an inplace operation" in trains and "which is output 0 of Exp" in trains
    assert f"`torch.Tensor.div_` at line 49 (`{RAISING}`)" in trains  # the locator's culprit, by the script's line
    assert "`torch.Tensor.exp` at line 48 (`p = logits.exp()`)" in trains
    # the rewrite of the raising line alone is not proposed: graded, the script with it still has its silent bug
    # (the catalogue's "only the raising line fixed"), and feedback proposes only a fix that passes every check
    assert f"`{RAISING}` -> `{FIXED_RAISING}`" not in trains
    assert "A fix to try" not in trains
    assert "is not defined" in output(result, "the two bugs")


def test_a_silent_bug_is_told_apart_from_a_changed_forward(grade):
    only_raising = grade(ID, SCRIPT.replace(RAISING, FIXED_RAISING) + "\n\ndef in_place_writes():\n    return 1\n")
    one_step = output(only_raising, "one step")
    assert "The loss of the first batch matches" in one_step and "gradcheck" in one_step
    assert "did not return a dict" in output(only_raising, "the two bugs")

    no_normalisation = grade(ID, SCRIPT.replace(RAISING, FIXED_RAISING).replace(SILENT, "h = h"))
    assert "computes something else than the script does" in output(no_normalisation, "one step")
    gradcheck = output(no_normalisation, "gradcheck")  # consistent gradients of another function: not counted
    assert gradcheck.startswith("Not counted yet: ")


@pytest.mark.parametrize("change, check, words", [
    ({RAISING: "HARMLESS", "p = logits.exp()": "RAISES"}, "the two bugs", "the one that changes in place a tensor"),
    ({SILENT: "HARMLESS"}, "the two bugs", "hides part of the forward pass"),
    ({"model.scale.data.clamp_(*SCALE_RANGE)": "SILENTLY_WRONG"}, "the harmless writes", "call every harmless"),
    ({"x /= x.std(dim=0)": None}, "the harmless writes", "leaves one out"),
])
def test_a_wrong_classification_is_told_without_the_answer(grade, change, check, words):
    code = solution_code(ID)
    for line, verdict in change.items():
        old = next((entry for entry in code.splitlines() if entry.strip().startswith(f'"{line}":')), None)
        new = f'        "{line}": {verdict},' if verdict else ""
        code = code.replace(old, new) if old else code.replace("    return {\n", f"    return {{\n{new}\n", 1)
    result = grade(ID, code)
    assert check in failing(result) <= {"the two bugs", "the harmless writes"}
    said = output(result, check)
    assert words in said and "hidden inputs" in said
    assert RAISING not in said and SILENT not in said  # never the true line


def test_a_named_line_reads_as_python_reads_it():
    assert normalized("   p/=p.sum(dim=1,keepdim=True)   # exp saved p") == RAISING
    assert normalized("h.data /= h.data.norm(dim = 1, keepdim = True)\n") == SILENT
    assert normalized("p /= p.sum(dim=0, keepdim=True)") != RAISING
    assert normalized("for x in (") == "for x in ("  # not a whole statement: its words, single-spaced


def test_the_solution_scores_full_under_another_salt(grade):
    result = grade(ID, solution_code(ID), salt="another term")
    assert result.score == 10, [(t.name, t.output) for t in result.tests if t.status == "failed"]
