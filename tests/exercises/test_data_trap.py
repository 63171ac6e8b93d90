"""data_trap: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/data_trap.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "data_trap"
BROKEN = known_submissions(ID).broken


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"forward", "backward runs", "gradients", "gradcheck"} <= failing(result)
    assert "leaf Variable that requires grad" in next(t.output for t in result.tests if t.name == "forward")
