"""leaf_sgd: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/leaf_sgd.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "leaf_sgd"
BROKEN = known_submissions(ID).broken


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"values", "same tensors", "two steps"} <= failing(result)
    assert "leaf Variable that requires grad" in next(t.output for t in result.tests if t.name == "values")
