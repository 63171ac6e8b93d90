"""inplace_dropout: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/inplace_dropout.py, and tests/exercises/test_catalogue.py grades every entry."""

import nbformat
import pytest

from autograder.exercises import get
from autograder.reference_store import known_submissions
from tests.conftest import SOLUTIONS, failing, solution_code

ID = "inplace_dropout"
BROKEN = known_submissions(ID).broken


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


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"backward runs", "gradients", "gradcheck", "autocast"} <= failing(result)
    assert {"forward", "dropout", "train and eval"}.isdisjoint(failing(result))  # the math is right
    for name in ("backward runs", "autocast"):
        assert "modified by an inplace operation" in next(t.output for t in result.tests if t.name == name)
