"""rnn_hidden: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/rnn_hidden.py, and tests/exercises/test_catalogue.py grades every entry."""

from autograder.reference_store import known_submissions
from tests.conftest import failing, solution_code

ID = "rnn_hidden"
BROKEN = known_submissions(ID).broken


def test_public_checks_pass_and_are_fast(grade):

    import torch

    # The first optimizer a process builds imports torch._dynamo (about 2 s, once); the notebook's
    # failure cell has paid that before check() runs, so time what check() itself costs.
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    result = grade(ID, solution_code(ID), public_only=True)
    assert result.score == result.max_score > 0, result


def test_broken_starter_scores_less(grade):
    result = grade(ID, BROKEN)
    assert result.score < 10
    assert {"runs", "losses", "truncated", "final weights"} <= failing(result)
    assert "modified by an inplace operation" in next(t.output for t in result.tests if t.name == "runs")
    truncated = next(t.output for t in result.tests if t.name == "truncated")
    assert "history" in truncated or "grows" in truncated


def test_starter_is_not_attempted(grade):
    from autograder.assign import strip_solutions

    result = grade(ID, strip_solutions(solution_code(ID)))
    assert result.score == 0 and result.status == "not_attempted", result
