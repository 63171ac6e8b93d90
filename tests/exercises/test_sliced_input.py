"""sliced_input: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/sliced_input.py, and tests/exercises/test_catalogue.py grades every entry."""


from autograder.assign import strip_solutions
from autograder.reference_store import known_submissions
from tests.conftest import failing, solution_code

ID = "sliced_input"
BROKEN = known_submissions(ID).broken


def test_broken_starter_earns_nothing_while_backward_raises(grade):
    result = grade(ID, BROKEN)
    outputs = {t.name: t.output for t in result.tests}
    assert result.score == 0 and failing(result) == set(outputs)
    assert outputs["forward"].startswith("Not counted yet: ")  # its forward computes the intended math
    assert "modified by an inplace operation" in outputs["backward runs"]


def test_public_self_check_passes_the_solution(grade):
    """(How fast it is belongs to benchmarks/notebooks.py, not to a test.)"""
    result = grade(ID, solution_code(ID), public_only=True)
    assert result.score == result.max_score


def test_starter_answer_is_not_attempted(grade):
    result = grade(ID, strip_solutions(solution_code(ID)))
    assert result.score == 0
    assert "Not attempted" in result.output
