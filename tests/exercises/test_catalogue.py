"""The same promises for every exercise, over its catalogue of known submissions.

Each `references/<id>.py` holds, beside its REFERENCE, BROKEN (the report's code: it must score 0), CORRECT
(name -> code: every one must score 10/10) and WRONG (name -> (code, the check or set of checks that must fail)),
optionally SAYS (name -> words the failing check's feedback must contain);
`autograder.reference_store.known_submissions` reads them. WRONG holds the exercise's starter with its
`raise NotImplementedError` lines deleted (a `pass` in their place), which must fail every check: a forward that
runs earns nothing while the exercise's bug is still there.
The exercises come from the registry, so a new exercise is graded here without a change.
"""

import re

import pytest

from autograder.exercises import EXERCISES
from autograder.intake.cells import ANSWER_MARKER, CELL_BREAK
from autograder.intake.submission import answer_code
from autograder.reference_store import ENV, known_submissions
from tests.conftest import EXERCISE_NOTEBOOKS, failing, solution_code

CATALOGUES = {eid: known_submissions(eid) for eid in EXERCISES}
STARTER = "starter without the raise"
"""The WRONG entry of every catalogue that is the exercise notebook's starter, its raise lines deleted."""
CORRECT = [(eid, name) for eid, known in CATALOGUES.items() for name in sorted(known.correct)]
WRONG = [(eid, name) for eid, known in CATALOGUES.items() for name in sorted(known.wrong)]


def failed_checks(result):
    return [(t.name, t.output) for t in result.tests if t.status == "failed"]


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_catalogue_names_checks_the_exercise_has(exercise_id):
    checks = {c.name for c in EXERCISES[exercise_id].checks}
    unknown = {name: sorted(must_fail - checks) for name, (_, must_fail) in CATALOGUES[exercise_id].wrong.items()
               if not must_fail <= checks}
    assert not unknown, f"WRONG entries name checks {exercise_id} does not have (it has {sorted(checks)}): {unknown}"


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_solution_scores_full(grade, exercise_id):
    result = grade(exercise_id, solution_code(exercise_id))
    assert result.score == result.max_score == 10, failed_checks(result)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_broken_report_code_scores_zero(grade, exercise_id):
    result = grade(exercise_id, CATALOGUES[exercise_id].broken)
    assert result.score == 0, [(t.name, t.score) for t in result.tests if t.score]


def starter_without_the_raise(exercise_id: str) -> str:
    """The answer cells of the exercise notebook, each `raise NotImplementedError(...)` line made a `pass` (the
    comment line that marks an answer cell left out: it changes nothing the grader runs)."""
    (path,) = EXERCISE_NOTEBOOKS.glob(f"*_{exercise_id}.ipynb")
    code = "\n".join(line for line in answer_code(path).code.splitlines()
                     if not ANSWER_MARKER.match(line) and line != CELL_BREAK)
    return re.sub(r"^([ \t]*)raise NotImplementedError\(.*\)$", r"\1pass", code, flags=re.M)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_the_starter_without_its_raise_is_catalogued_to_fail_every_check(exercise_id):
    checks = {c.name for c in EXERCISES[exercise_id].checks}
    code, must_fail = CATALOGUES[exercise_id].wrong[STARTER]
    assert must_fail == checks
    def lines(text):
        return [line for line in text.splitlines() if line.strip()]
    assert lines(code) == lines(starter_without_the_raise(exercise_id))


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True to a scalar")
@pytest.mark.parametrize("exercise_id, name", CORRECT, ids=[f"{e}-{n}" for e, n in CORRECT])
def test_correct_alternative_passes(grade, exercise_id, name):
    result = grade(exercise_id, CATALOGUES[exercise_id].correct[name])
    assert result.score == 10, failed_checks(result)


@pytest.mark.parametrize("exercise_id, name", WRONG, ids=[f"{e}-{n}" for e, n in WRONG])
def test_wrong_fix_fails_for_the_right_reason(grade, exercise_id, name):
    known = CATALOGUES[exercise_id]
    code, must_fail = known.wrong[name]
    result = grade(exercise_id, code)
    assert result.score < 10
    assert must_fail <= failing(result), [(t.name, t.output) for t in result.tests]
    for words in known.says.get(name, ()):
        output = "\n".join(t.output for t in result.tests if t.name in must_fail)
        assert words in output, output


@pytest.mark.parametrize("catalogue, says", [
    ("", "BROKEN must be"),
    ("BROKEN = 'x = 1'\nCORRECT = {'a': 'x = 2'}\nWRONG = {}", "WRONG must be"),
    ("BROKEN = 'x = 1'\nCORRECT = {'a': 'x = 2'}\nWRONG = {'b': 'x = 3'}", "WRONG['b'] must be"),
    ("BROKEN = 'x = 1'\nCORRECT = {'a': 'x = 2'}\nWRONG = {'b': ('x = 3', 'forward')}\nSAYS = {'c': ('no',)}",
     "SAYS['c'] must name"),
])
def test_an_incomplete_catalogue_is_refused_with_its_file(tmp_path, monkeypatch, catalogue, says):
    (tmp_path / "toy.py").write_text(f"REFERENCE = {{}}\n{catalogue}\n")
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(TypeError, match=re.escape(says)) as info:
        known_submissions("toy")
    assert str(tmp_path / "toy.py") in str(info.value)
