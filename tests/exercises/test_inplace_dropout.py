"""inplace_dropout: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/inplace_dropout.py, and tests/exercises/test_catalogue.py grades every entry."""

import nbformat
import pytest

from autograder.exercises import get
from autograder.reference_store import known_submissions
from tests.conftest import SOLUTIONS, failing, solution_code

ID = "inplace_dropout"
KNOWN = known_submissions(ID)
BROKEN = KNOWN.broken


def test_failure_cell_raises_the_declared_error():
    """The notebook's code cells up to the failure cell run in order; that cell raises the declared error."""
    (path,) = SOLUTIONS.glob(f"*_{ID}.ipynb")
    namespace = {"__name__": "__notebook__"}
    raised = 0
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        if "answer" in cell.metadata.get("tags", []):
            break
        code = compile(cell.source, "<cell>", "exec")
        if "raises-exception" not in cell.metadata.get("tags", []):
            exec(code, namespace)  # noqa: S102 - the notebook's own setup
            continue
        with pytest.raises(Exception) as info:
            exec(code, namespace)  # noqa: S102
        assert get(ID).failure.matches(type(info.value).__name__, str(info.value)), info.value
        raised += 1
    assert raised


def test_solution_passes_the_self_check(grade):
    result = grade(ID, solution_code(ID), public_only=True)
    assert result.score == result.max_score > 0, result


def test_broken_starter_earns_nothing_while_backward_raises(grade):
    result = grade(ID, BROKEN)
    outputs = {t.name: t.output for t in result.tests}
    assert result.score == 0 and failing(result) == set(outputs)
    for name in ("backward runs", "autocast"):
        assert "modified by an inplace operation" in outputs[name]
    for name in ("forward", "dropout", "train and eval"):  # the math is right: not counted while backward raises
        assert outputs[name].startswith("Not counted yet: "), outputs[name]


def test_out_of_place_dropout_is_right_but_not_the_task(grade):
    """The fix exercise 3 taught (a new tensor) runs and is right; this exercise asks to keep the memory saving."""
    code, _ = KNOWN.wrong["inplace=False"]
    assert failing(grade(ID, code)) == {"in place"}


def test_a_clone_fails_in_place_every_time(grade):
    """A clone of relu's output, dropped out in place, is a new tensor: `in place` fails on every grading.
    The check once compared addresses after `proj`'s output was freed, and the clone, allocated next, got its
    memory back about one time in three: the same answer passed and failed by chance. Twenty gradings would
    have seen that with a probability above 0.999."""
    code, _ = KNOWN.wrong["clone then in place"]
    verdicts = {t.status.value for _ in range(20) for t in grade(ID, code, public_only=True).tests
                if t.name == "in place"}
    assert verdicts == {"failed"}, verdicts
