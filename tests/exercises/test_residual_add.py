"""residual_add: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/residual_add.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "residual_add"
KNOWN = known_submissions(ID)
BROKEN, CORRECT, WRONG = KNOWN.broken, KNOWN.correct, KNOWN.wrong  # also imported by other tests


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"backward runs", "gradients"} <= failing(result)
    assert "modified by an inplace operation" in next(t.output for t in result.tests if t.name == "backward runs")
