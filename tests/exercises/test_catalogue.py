"""The same three promises for every exercise, over each test module's catalogue of fixes.

Each `tests/exercises/test_<id>.py` holds BROKEN (the report's code), CORRECT (name -> code: every one
must score 10/10) and WRONG (name -> (code, the check or set of checks that must fail)), optionally SAYS
(name -> words the failing check's feedback must contain), plus its exercise's own tests.
"""

import importlib

import pytest

from autograder.exercises import EXERCISES
from tests.conftest import failing, solution_code

CATALOGUES = {eid: importlib.import_module(f"tests.exercises.test_{eid}") for eid in EXERCISES}
CORRECT = [(eid, name) for eid, mod in CATALOGUES.items() for name in sorted(mod.CORRECT)]
WRONG = [(eid, name) for eid, mod in CATALOGUES.items() for name in sorted(mod.WRONG)]


def failed_checks(result):
    return [(t.name, t.output) for t in result.tests if t.status == "failed"]


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_solution_scores_full(grade, exercise_id):
    result = grade(exercise_id, solution_code(exercise_id))
    assert result.score == result.max_score == 10, failed_checks(result)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_broken_report_code_scores_less(grade, exercise_id):
    result = grade(exercise_id, CATALOGUES[exercise_id].BROKEN)
    assert result.score < result.max_score


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True to a scalar")
@pytest.mark.parametrize("exercise_id, name", CORRECT, ids=[f"{e}-{n}" for e, n in CORRECT])
def test_correct_alternative_passes(grade, exercise_id, name):
    result = grade(exercise_id, CATALOGUES[exercise_id].CORRECT[name])
    assert result.score == 10, failed_checks(result)


@pytest.mark.parametrize("exercise_id, name", WRONG, ids=[f"{e}-{n}" for e, n in WRONG])
def test_wrong_fix_fails_for_the_right_reason(grade, exercise_id, name):
    catalogue = CATALOGUES[exercise_id]
    code, must_fail = catalogue.WRONG[name]
    result = grade(exercise_id, code)
    assert result.score < 10
    must_fail = {must_fail} if isinstance(must_fail, str) else set(must_fail)
    assert must_fail <= set(failing(result)), [(t.name, t.output) for t in result.tests]
    for words in getattr(catalogue, "SAYS", {}).get(name, ()):
        output = "\n".join(t.output for t in result.tests if t.name in must_fail)
        assert words in output, output
