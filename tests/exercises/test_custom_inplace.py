"""custom_inplace: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/custom_inplace.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing

ID = "custom_inplace"
BROKEN = known_submissions(ID).broken


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"in place", "saves output"} <= failing(result)
