"""results.json read back: `Result.from_json` is the inverse of `to_json`, and refuses, naming the field,
anything `to_json` would not have written (a results.json may be a student's)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.core.result import MAX_LINES, Cause, Printed, Result, SubmittedFile, TestResult
from autograder.core.status import CHECK_STATUSES, Status


def sample(status: Status = Status.FAILED) -> Result:
    return Result("residual_add", "ada.ipynb", status, 3, 10, "3/10 points.",
                  (TestResult("forward", 3, 3, Status.PASSED, "", "visible", "The output equals the math."),
                   TestResult("gradients", 0, 7, Status.FAILED, "Gradient differs.", "after_due_date", brief="differs",
                         trial="train/float32/cpu", cause=0)),
                  execution_time=1.5, printed=Printed(stdout="hi"), source=SubmittedFile(sha256="ab" * 32),
                  causes=(Cause("Your code raised RuntimeError ...", "RuntimeError", (4, 7), "torch.Tensor.add_"),))


FIRST_RELEASE = (
    '{"exercise": "residual_add", "submission": "ada.ipynb", "status": "failed", "score": 3, "max_score": 10, '
    '"output": "3/10 points.", "tests": [{"name": "forward", "score": 3, "max_score": 3, "status": "passed", '
    '"output": "", "visibility": "visible", "description": "The output equals the math."}, {"name": "gradients", '
    '"score": 0, "max_score": 7, "status": "failed", "output": "Gradient differs.", "visibility": '
    '"after_due_date", "description": ""}], "devices": ["cpu"], "execution_time": 1.5, "stdout": "hi", '
    '"submission_sha256": "' + "ab" * 32 + '"}')
"""A results.json as the first release wrote it: Gradescope's fields and ours, before the facts were fields."""


def read_back(result: Result) -> Result:
    return Result.from_json(json.loads(json.dumps(result.to_json())))


def test_results_json_is_written_as_before_with_the_facts_added():
    data = sample().to_json()
    assert json.dumps(data) == (
        '{"exercise": "residual_add", "submission": "ada.ipynb", "status": "failed", "score": 3, "max_score": 10, '
        '"output": "3/10 points.", "tests": [{"name": "forward", "score": 3, "max_score": 3, "status": "passed", '
        '"output": "", "visibility": "visible", "description": "The output equals the math.", "brief": "", '
        '"trial": "", "cause": null}, {"name": "gradients", '
        '"score": 0, "max_score": 7, "status": "failed", "output": "Gradient differs.", "visibility": '
        '"after_due_date", "description": "", "brief": "differs", "trial": "train/float32/cpu", "cause": 0}], '
        '"devices": ["cpu"], "execution_time": 1.5, "causes": [{"text": "Your code raised RuntimeError ...", '
        '"error": "RuntimeError", "lines": [4, 7], "op": "torch.Tensor.add_", "tampered": false}], "stdout": "hi", '
        '"submission_sha256": "' + "ab" * 32 + '"}')
    assert type(data["status"]) is str and all(type(t["status"]) is str for t in data["tests"])
    assert f"{Status.NOT_ATTEMPTED}" == str(Status.NOT_ATTEMPTED) == "not_attempted"  # in pages and CSV cells


def test_a_results_json_of_the_first_release_reads_back_without_the_facts():
    old = Result.from_json(json.loads(FIRST_RELEASE))
    assert old.causes == () and [t.cause for t in old.tests] == [None, None] and old.tests[1].trial == ""
    assert old.tests[1].output == "Gradient differs." and old.printed.stdout == "hi" and old.extra == {}


@pytest.mark.parametrize("status", list(Status))
def test_every_status_reads_back(status):
    assert read_back(sample(status)) == sample(status)
    assert read_back(sample(status)).status is status


text = st.text(max_size=20)
numbers = st.floats(min_value=0, max_value=1e6, allow_nan=False) | st.integers(min_value=0, max_value=10**6)


@st.composite
def checks(draw, causes: int) -> TestResult:
    maximum = draw(numbers)
    return TestResult(draw(text), draw(st.floats(min_value=0, max_value=maximum)), maximum,
                 draw(st.sampled_from(CHECK_STATUSES)), draw(text),
                 draw(st.sampled_from(["visible", "after_due_date"])),
                 draw(text), draw(text), draw(text), draw(st.none() | st.integers(0, causes - 1)) if causes else None)


causes = st.builds(Cause, text, text, st.lists(st.integers(1, 10**6), max_size=MAX_LINES).map(tuple), text,
                   st.booleans())


@st.composite
def results(draw) -> Result:
    maximum = draw(numbers)
    extra = draw(st.dictionaries(st.sampled_from(["note", "culprit"]), st.none() | st.integers() | text))
    maybe = st.none() | text
    found = tuple(draw(st.lists(causes, max_size=3)))
    tests = tuple(draw(st.lists(checks(len(found)), min_size=max(0, len(found) - 1), max_size=4)))
    return Result(draw(text), draw(text), draw(st.sampled_from(list(Status))), draw(st.floats(0, maximum)), maximum,
                  draw(text), tests, tuple(draw(st.lists(text, max_size=3))), draw(numbers), extra, found,
                  Printed(draw(maybe), draw(maybe)), draw(maybe),
                  draw(st.none() | st.builds(SubmittedFile, maybe, maybe)))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(results())
def test_from_json_is_the_inverse_of_to_json(result):
    text = json.dumps(result.to_json())
    again = Result.from_json(json.loads(text))
    assert json.dumps(again.to_json()) == text  # the file reads back and writes out byte for byte the same
    assert again.tests == result.tests and again.extra == result.extra and again.status == result.status
    assert again.causes == result.causes and again.printed == result.printed
    assert again.grader_traceback == result.grader_traceback


GOOD = sample().to_json()
BAD = [
    ([], "`results.json`: a JSON object expected"),
    ("passed", "`results.json`: a JSON object expected"),
    ({k: v for k, v in GOOD.items() if k != "devices"}, "`devices`: missing"),
    ({k: v for k, v in GOOD.items() if k != "exercise"}, "`exercise`: missing"),
    ({**GOOD, "status": "ok"}, "`status`: one of passed, failed"),
    ({**GOOD, "status": "perfect"}, "`status`: one of"),
    ({**GOOD, "status": ["passed"]}, "`status`: one of"),
    ({**GOOD, "exercise": ["x"]}, "`exercise`: a string expected, not list"),
    ({**GOOD, "output": 3}, "`output`: a string expected"),
    ({**GOOD, "score": "ten"}, "`score`: a number expected, not str"),
    ({**GOOD, "score": True}, "`score`: a number expected, not bool"),
    ({**GOOD, "score": float("nan")}, "`score`: a finite number from 0 to 10 expected"),
    ({**GOOD, "score": 11}, "`score`: a finite number from 0 to 10 expected"),
    ({**GOOD, "score": -1}, "`score`"),
    ({**GOOD, "max_score": float("inf")}, "`max_score`: a finite number at least 0 expected"),
    ({**GOOD, "max_score": 10**400}, "`max_score`"),
    ({**GOOD, "execution_time": None}, "`execution_time`: a number expected"),
    ({**GOOD, "tests": "all of them"}, "`tests`: a list expected"),
    ({**GOOD, "tests": [1]}, "`tests[0]`: a JSON object expected"),
    ({**GOOD, "tests": [{"name": "x"}]}, "`tests[0].score`: missing"),
    ({**GOOD, "tests": [GOOD["tests"][0], {**GOOD["tests"][1], "status": "crashed"}]},
     "`tests[1].status`: one of passed, failed expected"),
    ({**GOOD, "tests": [{**GOOD["tests"][0], "score": 4}]}, "`tests[0].score`: a finite number from 0 to 3"),
    ({**GOOD, "tests": [{**GOOD["tests"][0], "description": None}]}, "`tests[0].description`: a string expected"),
    ({**GOOD, "devices": "cpu"}, "`devices`: a list of strings expected"),
    ({**GOOD, "devices": [0]}, "`devices`: a list of strings expected"),
    ({**GOOD, "stdout": 3}, "`stdout`: a string expected, not int"),
    ({**GOOD, "submission_path": ["/etc/passwd"]}, "`submission_path`: a string expected"),
    ({**GOOD, "grader_traceback": None}, "`grader_traceback`: a string expected"),
    ({**GOOD, "causes": "one"}, "`causes`: a list of at most one cause per check"),
    ({**GOOD, "causes": [{"text": "x"}] * 4}, "`causes`: a list of at most one cause per check"),
    ({**GOOD, "causes": [{"error": "x"}]}, "`causes[0].text`: missing"),
    ({**GOOD, "causes": [{"text": "x", "lines": [0]}]}, "`causes[0].lines`: a list of at most 16 line numbers"),
    ({**GOOD, "causes": [{"text": "x", "lines": list(range(1, 40))}]}, "`causes[0].lines`"),
    ({**GOOD, "causes": [{"text": "x", "lines": [True]}]}, "`causes[0].lines`"),
    ({**GOOD, "causes": [{"text": "x", "tampered": "yes"}]}, "`causes[0].tampered`: true or false expected"),
    ({**GOOD, "tests": [GOOD["tests"][0], {**GOOD["tests"][1], "cause": 1}]},
     "`tests[1].cause`: null or the index of one of `causes` expected"),
    ({**GOOD, "tests": [GOOD["tests"][0], {**GOOD["tests"][1], "cause": True}]}, "`tests[1].cause`"),
    ({**GOOD, "tests": [{**GOOD["tests"][0], "trial": 3}]}, "`tests[0].trial`: a string expected"),
]


@pytest.mark.parametrize("data, message", BAD, ids=range(len(BAD)))
def test_anything_to_json_would_not_write_is_refused_by_name(data, message):
    with pytest.raises(ValueError) as refused:
        Result.from_json(data)
    assert message in str(refused.value)


def test_other_keys_go_back_into_extra():
    result = Result.from_json({**GOOD, "note": {"any": ["json"]}})
    assert result.extra == {"note": {"any": ["json"]}}  # the typed fields' keys go to the typed fields
    assert result.printed == Printed(stdout="hi") and result.source == SubmittedFile(sha256="ab" * 32)
