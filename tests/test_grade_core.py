"""The pure core: RunReports in, Results out, one closed set of outcomes. No processes here."""

from dataclasses import replace

import nbformat
import pytest
import torch

from autograder import trials as plan
from autograder.assign import exercise_notebook
from autograder.core import checks
from autograder.core.evidence import Evidence, GraderError
from autograder.core.grade import grade
from autograder.core.messages import INPLACE_ERROR
from autograder.core.outcome import ErrorInfo, Outcome, RunReport
from autograder.core.spec import Check, Exercise, ExpectedError, Scenario, Symbol
from autograder.core.status import Status
from autograder.exercises import EXERCISES, get
from autograder.harness import run_answer
from autograder.intake.submission import is_answer_cell
from autograder.pipeline import judge
from autograder.reference_store import run_reference
from tests.conftest import SOLUTIONS, prepared

EX = get("residual_add")


def graded(report, public_only=False):
    return judge(EX, prepared(EX.id, public_only=public_only), report)


@pytest.mark.parametrize("status, words", [(Status.TIMED_OUT, "time limit"), (Status.CRASHED, "crashed"),
                                           (Status.MALFORMED, "could not be read")])
def test_run_failures_fail_every_check_with_the_reason(status, words):
    result = graded(RunReport(status, "detail of the failure"))
    assert result.status == status and result.score == 0
    assert all(t.status == "failed" and words in t.output and "detail of the failure" in t.output for t in result.tests)


def test_syntax_error_is_malformed_and_names_the_line():
    result = graded(RunReport(load_error=ErrorInfo("SyntaxError", "invalid syntax", 3, "def f(:")))
    assert result.status == "malformed"
    assert "line 3" in result.output and "def f(:" in result.output


def test_missing_name_says_which_and_where_to_define_it():
    result = graded(RunReport(problems={"ResidualBlock": "`ResidualBlock` is not defined."}))
    assert result.status == "failed" and result.score == 0
    assert all("ResidualBlock" in t.output for t in result.tests)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_untouched_exercise_notebook_is_not_attempted(grade, exercise_id):
    """The student's notebook as generated from the solution, graded before any change: 0, 'not attempted'."""
    (path,) = SOLUTIONS.glob(f"*_{exercise_id}.ipynb")
    student = exercise_notebook(nbformat.read(path, as_version=4))
    code = "\n\n".join(c.source for c in student.cells if is_answer_cell(c))
    result = grade(exercise_id, code)
    assert result.status == "not_attempted" and result.score == 0, result.output
    assert "Not attempted" in result.output


def test_wrong_signature_is_reported():
    made = prepared(EX.id, public_only=True)
    report = run_answer(EX, "class ResidualBlock:\n    def __init__(self):\n        pass\n", made.trials, made.inputs)
    assert "should accept (channels)" in report.problems["ResidualBlock"]


def test_public_only_grades_public_checks_only():
    result = graded(RunReport(status=Status.CRASHED, detail="x"), public_only=True)
    names = {t.name for t in result.tests}
    assert names == {c.name for c in EX.checks if c.public}
    assert all(t.visibility == "visible" for t in result.tests)


def test_hidden_checks_are_marked_and_reveal_no_values(grade):
    # the data-trap fix: silently wrong gradients, reported without any tensor values
    from tests.exercises.test_residual_add import WRONG
    result = grade(EX.id, WRONG[".data add"][0])
    hidden = [t for t in result.tests if t.visibility != "visible"]
    assert hidden
    failed = next(t for t in hidden if t.name == "gradients")
    assert failed.status == "failed" and "tensor(" not in failed.output and "[" not in failed.output


TOY_REFERENCE = {"f": lambda x: x * 2}


def _toy(evaluate, scenarios_public=True):
    def draw(g, dtype):
        return {"x": torch.randn(3, generator=g, dtype=dtype)}

    def run(ns, inputs, device, obs):
        obs["y"] = ns["f"](inputs["x"])

    return Exercise(
        id="toy", number=99, title="toy", defines=(Symbol("f", "function", ("x",)),),
        scenarios=(Scenario("s", draw, run, ("y",), public=scenarios_public),),
        checks=(Check("c", 10, "toy", evaluate, public=scenarios_public),),
        failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    )


def test_a_check_that_sees_no_trial_is_a_grader_error_not_a_pass():
    toy = _toy(checks.completes(("s",), "Running f"))
    with pytest.raises(GraderError, match="no trial ran, in scenarios s"):
        toy.checks[0].rule(Evidence(toy, (), {}, {}, {}))


def test_a_visible_check_of_hidden_scenarios_alone_is_refused_when_defined():
    """A visible check is what the self-check judges, on public trials: one that reads none is a mistake."""
    with pytest.raises(ValueError, match="is visible but reads no public scenario"):
        replace(_toy(checks.completes(("s",), "Running f"), scenarios_public=False),
                checks=(Check("c", 10, "toy", checks.completes(("s",), "Running f"), public=True),))


def test_a_failing_reference_is_a_grader_error():
    toy = _toy(checks.matches_reference(("y",), "Output"))
    trials = plan.plan(toy, ("cpu",), False)
    inputs = plan.draw(toy, trials, 0)
    report = run_answer(toy, "def f(x):\n    return x * 2\n", trials, inputs)
    with pytest.raises(GraderError, match="reference failed"):
        grade(toy, report, run_reference(toy, trials, inputs, {"f": lambda x: 1 / 0}), trials, inputs)


def test_matches_reference_fails_outside_tolerance_and_passes_inside():
    toy = _toy(checks.matches_reference(("y",), "Output"))
    trials = plan.plan(toy, ("cpu",), False)
    inputs = plan.draw(toy, trials, 0)
    ref = run_reference(toy, trials, inputs, TOY_REFERENCE)
    for code, passes in (("def f(x):\n    return x * 2 * (1 + 1e-9)\n", True),
                         ("def f(x):\n    return x * 2.01\n", False),
                         ("def f(x):\n    return (x * 2)[:2]\n", False)):
        result = grade(toy, run_answer(toy, code, trials, inputs), ref, trials, inputs)
        assert (result.score == 10) is passes, result.tests[0].output


def test_error_in_answer_is_located_at_its_line():
    toy = _toy(checks.completes(("s",), "Running f"))
    trials = plan.plan(toy, ("cpu",), False)
    inputs = plan.draw(toy, trials, 0)
    code = "def f(x):\n    y = x * 2\n    y.no_such_method()\n    return y\n"
    result = grade(toy, run_answer(toy, code, trials, inputs), run_reference(toy, trials, inputs, TOY_REFERENCE),
                   trials, inputs)
    assert "line 3" in result.tests[0].output and "y.no_such_method()" in result.tests[0].output




# ---- hidden means hidden (tests/test_hidden_stays_hidden.py attacks it end to end) ---------------------------

SECRET = "SECRET [3, 4, 5, 5] 0.123456789"
ANSWER = "import torch\nclass ResidualBlock(torch.nn.Module):\n    out += x  # the student's line 3\n"


def _public_passes_hidden_raises(error, exercise=EX, answer=ANSWER, public_error=None):
    """A report whose hidden trials all raise `error`; its public trials match the reference, or all raise
    `public_error`."""
    made = prepared(exercise.id)
    outcomes = {t.key: (Outcome(error=public_error) if public_error else made.reference[t.key])
                if exercise.scenario(t.scenario).public else Outcome(error=error) for t in made.trials}
    return judge(exercise, made, RunReport(outcomes=outcomes), answer=answer)


def test_a_visible_check_failing_only_on_hidden_inputs_says_which_kind_of_error_not_its_line_or_message():
    culprit = {"culprit": {"op": "torch.Tensor.add_", "file": "<answer>", "line": 3, "code": SECRET, "chain": []},
               "saved_by": {"op": "torch.nn.functional.relu", "file": "<answer>", "line": 2, "code": SECRET},
               "tensor": {"shape": [3, 4, 5, 5]}}
    error = ErrorInfo("RuntimeError", "one of the variables needed for gradient computation has been modified by "
                      f"an inplace operation: {SECRET}", 3, SECRET, culprit)
    in_public = {"culprit": {**culprit["culprit"], "code": "out += x"},
                 "saved_by": {**culprit["saved_by"], "code": "x"}}
    public = ErrorInfo("RuntimeError", "one of the variables needed for gradient computation has been modified by "
                       "an inplace operation: [torch.FloatTensor [2, 2]]", 3, "out += x", in_public)
    result = _public_passes_hidden_raises(error, public_error=public)  # the public trials met line 3 too
    gradients = next(t for t in result.tests if t.name == "gradients")
    assert gradients.visibility == "after_due_date" and gradients.status == "failed"
    assert "(on hidden inputs: scenario 'train', float32 on cpu)" in gradients.output
    # even where the public trials met line 3 too: a hidden input could pick among the lines they met (redact.py)
    assert "modified by an inplace operation" in gradients.output and "What it means" in gradients.output
    assert "line 3" not in gradients.output and "torch.Tensor.add_" not in gradients.output
    assert "RuntimeError" not in gradients.output.split("What it means")[0]
    assert all("SECRET" not in t.output and "[3, 4, 5, 5]" not in t.output for t in result.tests)

    alone = _public_passes_hidden_raises(error)  # raised on hidden inputs only: the line could encode them
    backward = next(t for t in alone.tests if t.name == "backward runs")
    assert backward.status == "failed" and "(on hidden inputs: scenario 'train'" in backward.output
    assert "raised an exception (its class is not shown" in backward.output and "line 3" not in backward.output
    assert not any(c.lines for c in alone.causes)


@pytest.mark.parametrize("type_name, public", [("ValueError", None), ("Shape_3_4_5_5", None), ("MyError", None),
                                               ("MyError", "MyError"), ("ValueError", "ValueError")])
def test_a_hidden_errors_type_is_never_shown(type_name, public):
    """An answer could define a thousand exception classes, or pick among Python's (or among those its public
    trials raised) by a hidden input."""
    answer = ANSWER + "class MyError(Exception):\n    pass\n"
    raised = ErrorInfo(public, "public", 2, "x") if public else None
    result = _public_passes_hidden_raises(ErrorInfo(type_name, SECRET, 99, SECRET), answer=answer, public_error=raised)
    backward = next(t for t in result.tests if t.name == "gradients")
    assert f"raised {type_name}" not in backward.output and "its class is not shown" in backward.output
    assert "SECRET" not in backward.output and "line 99" not in backward.output  # no such line in the answer


def test_the_reference_failing_on_hidden_inputs_is_a_grader_error_without_its_message():
    toy = _toy(checks.matches_reference(("y",), "Output"), scenarios_public=False)
    trials = plan.plan(toy, ("cpu",), False)
    inputs = plan.draw(toy, trials, 0)
    report = run_answer(toy, "def f(x):\n    return x * 2\n", trials, inputs)

    def secret(x):
        raise ValueError(f"{SECRET} {x.shape}")

    with pytest.raises(GraderError, match="reference failed") as raised:
        grade(toy, report, run_reference(toy, trials, inputs, {"f": secret}), trials, inputs)
    assert "SECRET" not in str(raised.value)
