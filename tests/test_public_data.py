"""The self-check's shipped public data: it matches what the references make now, it reads back exactly,
it is refused when tampered with, and it lets check() run with no reference installed."""

import json
import shutil

import pytest
import torch

from autograder import cli
from autograder import trials as trial_plan
from autograder.batch import References, Settings
from autograder.exercises import EXERCISES
from autograder.harness import load_answer, run_reference
from autograder.pipeline import grade_code, prepare
from autograder.public import PublicDataError, drift, load_public, make_public, paths
from autograder.reference_store import ENV, ReferencesMissing, load_reference
from autograder.selfcheck import check
from tests.conftest import solution_code


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_shipped_public_data_has_not_drifted(exercise_id):
    """Fails after a change to a reference or a public scenario: run `autograder publish` and commit."""
    assert drift(EXERCISES[exercise_id]) == []


def test_publish_check_exits_1_on_drift(monkeypatch, capsys):
    monkeypatch.setattr("autograder.public.drift", lambda exercise: [f"{exercise.id}: differs"])
    assert cli.main(["publish", "--check"]) == 1
    assert "drift: residual_add: differs" in capsys.readouterr().out


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_public_data_reads_back_as_drawn_and_run(exercise_id):
    exercise = EXERCISES[exercise_id]
    trials, inputs, expected = load_public(exercise)
    assert trials == trial_plan.plan(exercise, ("cpu",), public_only=True)
    drawn = trial_plan.draw(exercise, trials, trial_plan.PUBLIC_SEED)
    assert list(inputs) == list(drawn)
    for key, values in drawn.items():
        assert list(inputs[key]) == list(values)
        assert all(same(values[name], inputs[key][name]) for name in values), key
    for key, outcome in run_reference(exercise, trials, drawn).items():
        assert list(expected[key].values) == list(outcome.values)
        assert all(same(v, expected[key].values[name]) for name, v in outcome.values.items()), key
        assert expected[key].error == outcome.error


def tampered_copy(tmp_path, exercise_id, change):
    for path in paths(exercise_id):
        shutil.copy(path, tmp_path / path.name)
    json_path = paths(exercise_id, tmp_path)[0]
    data = json.loads(json_path.read_text())
    change(data)
    json_path.write_text(json.dumps(data))
    return tmp_path


@pytest.mark.parametrize("change", [
    lambda d: d.update(format=99),
    lambda d: d.update(exercise="leaf_sgd"),
    lambda d: d["trials"].pop(),
    lambda d: d["inputs"]["public/float32"].update(lr=[1, 2]),
    lambda d: d["inputs"]["public/float32"].update(x={"tensor": "no such tensor"}),
    lambda d: d["expected"]["public/float32/cpu"].update(error="boom"),
    lambda d: d["expected"]["public/float32/cpu"]["values"].pop("output"),  # its tensor then belongs to nothing
], ids=["format", "exercise", "trials", "value type", "tensor name", "error", "orphan tensor"])
def test_tampered_public_data_is_refused(tmp_path, change):
    folder = tampered_copy(tmp_path, "residual_add", change)
    with pytest.raises(PublicDataError, match="autograder publish"):
        load_public(EXERCISES["residual_add"], folder)


def test_missing_or_corrupt_public_data_is_refused(tmp_path):
    exercise = EXERCISES["data_trap"]
    with pytest.raises(PublicDataError, match="cannot read"):
        load_public(exercise, tmp_path)
    text, _ = make_public(exercise)
    json_path, tensor_path = paths(exercise.id, tmp_path)
    json_path.write_text(text)
    tensor_path.write_bytes(b"\x80\x02 not safetensors, and never unpickled")
    with pytest.raises(PublicDataError, match="cannot read"):
        load_public(exercise, tmp_path)


def test_a_batch_grades_public_scenarios_on_the_shipped_inputs_and_hidden_ones_on_salted_draws():
    exercise = EXERCISES["data_trap"]
    _, shipped, _ = load_public(exercise)
    made = {salt: References(Settings(devices=("cpu", "cuda"), salt=salt)).get(exercise) for salt in ("a", "b")}
    for prepared in made.values():
        assert set(prepared.inputs) == {f"{t.scenario}/{t.dtype}" for t in prepared.trials}  # one set for both devices
        assert set(prepared.reference) == {f"{t.scenario}/{t.dtype}/cpu" for t in prepared.trials}
        for key, values in shipped.items():
            assert all(same(v, prepared.inputs[key][name]) for name, v in values.items())
        assert prepared.hidden == set(prepared.inputs) - set(shipped) and not prepared.public_only
    hidden = made["a"].hidden
    assert hidden and all(not torch.equal(made["a"].inputs[k]["logits"], made["b"].inputs[k]["logits"]) for k in hidden)


def test_a_public_only_grading_judges_against_the_shipped_outcomes():
    exercise = EXERCISES["data_trap"]
    _, shipped, expected = load_public(exercise)
    prepared = prepare(exercise, ("cpu", "cuda"), public_only=True)
    assert prepared.trials == trial_plan.plan(exercise, ("cpu", "cuda"), public_only=True)
    assert prepared.inputs.keys() == shipped.keys() and prepared.reference.keys() == expected.keys()
    for key, outcome in expected.items():
        got = prepared.reference[key]
        assert got.error == outcome.error and all(same(v, got.values[n]) for n, v in outcome.values.items())
    assert prepared.hidden == frozenset() and prepared.public_only


@pytest.fixture
def no_references(tmp_path, monkeypatch):
    """A learner's machine: the package without references/ (AUTOGRADER_REFERENCES names an empty folder)."""
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(ReferencesMissing, match=r"self-check, check\(\), works without them"):
        load_reference("residual_add")


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_self_check_works_without_references(no_references, exercise_id):
    namespace, error = load_answer(solution_code(exercise_id))
    assert error is None
    result = check(exercise_id, namespace, quiet=True)
    assert result.tests and all(t.status == "passed" for t in result.tests), [(t.name, t.output) for t in result.tests]
    public = {c.name for c in EXERCISES[exercise_id].checks if c.public}
    assert {t.name for t in result.tests} == public


def test_public_only_grading_works_without_references(no_references):
    result = grade_code("data_trap", solution_code("data_trap"), public_only=True)
    assert result.score == result.max_score > 0
    with pytest.raises(ReferencesMissing):
        grade_code("data_trap", solution_code("data_trap"))
