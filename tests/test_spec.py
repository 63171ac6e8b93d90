"""The exercise DSL's agreements: names a check reads are checked when an exercise is defined, a rule sees only
what it declares, an empty selection is a grader error, and every scenario writes what it declares."""

import pytest

from autograder import trials as plan
from autograder.core import checks
from autograder.core.evidence import Evidence, GraderError
from autograder.core.messages import INPLACE_ERROR
from autograder.core.outcome import Outcome, Trial
from autograder.core.spec import PASS, Check, Exercise, ExpectedError, Family, Rule, Scenario, Symbol, select
from autograder.exercises import EXERCISES
from autograder.probes import GRAD
from autograder.reference_store import run_reference


def _nothing(*args):
    return {}


def _toy(*rules: Rule, scenarios: tuple[str, ...] = ("public", "hidden")) -> Exercise:
    """Scenarios that each write `y` and the GRAD family, and one check per rule."""
    return Exercise(
        id="toy", number=99, title="toy", defines=(Symbol("f", "function", ("x",)),),
        scenarios=tuple(Scenario(name, _nothing, _nothing, ("y", GRAD), public=name == "public") for name in scenarios),
        checks=tuple(Check(f"c{i}", 1, "toy", rule) for i, rule in enumerate(rules)),
        failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    )


def test_a_misspelt_scenario_fails_when_the_exercise_is_defined():
    with pytest.raises(ValueError, match=r"check 'c0': no scenario is named 'hiden' \(the scenarios: 'public', "
                                         r"'hidden'\)"):
        _toy(checks.completes(("public", "hiden"), "Running f"))


@pytest.mark.parametrize("reads, shown", [(("y_",), "`y_`"), ((Family("grads"),), "the family `grads …`")])
def test_reading_what_no_scenario_writes_fails_when_the_exercise_is_defined(reads, shown):
    with pytest.raises(ValueError, match=f"check 'c0' reads {shown}, which none of its scenarios"):
        _toy(checks.matches_reference(reads, "Output", ("public",)))


def test_a_key_of_a_written_family_and_every_scenario_may_be_read():
    _toy(checks.holds(GRAD.key("x"), ("hidden",), "no"), checks.matches_reference(("y",), "Output"))


def test_two_scenarios_of_one_name_fail_when_the_exercise_is_defined():
    with pytest.raises(ValueError, match="two scenarios are named 'public'"):
        _toy(scenarios=("public", "public"))


def test_select_takes_named_keys_and_family_members_in_the_selectors_order():
    keys = ["grad w", "output", "gradient", "grad", "grad x"]
    assert select(("output", GRAD), keys) == ["output", "grad w", "grad x"]
    assert GRAD.member("grad x") == "x" and GRAD.member("grad") is None and GRAD.members({"grad x": 1}) == {"x": 1}


def _evidence(exercise: Exercise, student: dict[str, dict], reference: dict[str, dict]) -> Evidence:
    trials = tuple(Trial(s.name, "float64", "cpu") for s in exercise.scenarios)
    return Evidence(exercise, trials, {f"{t.scenario}/float64": {} for t in trials},
                    {t.key: Outcome(student[t.scenario]) for t in trials},
                    {t.key: Outcome(reference[t.scenario]) for t in trials})


def test_a_rule_sees_only_the_scenarios_and_observations_it_declares():
    seen = []

    def record(ev):
        seen.extend((pair.trial.scenario, sorted(pair.got.values), sorted(pair.want.values)) for pair in ev.pairs())
        return PASS

    rule = Rule(record, ("hidden",), (GRAD,))
    values = {"y": 1.0, "grad x": 2.0, "grad w": 3.0}
    rule(_evidence(_toy(rule), {"public": values, "hidden": values}, {"public": values, "hidden": values}))
    assert seen == [("hidden", ["grad w", "grad x"], ["grad w", "grad x"])]


def test_an_empty_selection_is_a_grader_error_never_a_pass():
    """The reference made no observation the rule reads, in any trial it reads: a check that cannot fail."""
    rule = checks.matches_reference((GRAD,), "Gradient")
    empty = {"public": {"y": 1.0}, "hidden": {"y": 1.0}}
    with pytest.raises(GraderError, match="the reference observed nothing the check reads, in any scenario, "
                                          "reading grad …"):
        rule(_evidence(_toy(rule), empty, empty))


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_every_scenario_writes_what_it_declares_and_nothing_else(exercise_id):
    """On the reference, every trial: what a rule may read is what the run really writes."""
    exercise = EXERCISES[exercise_id]
    trials = plan.plan(exercise, ("cpu",), False)
    reference = run_reference(exercise, trials, plan.draw(exercise, trials, 0))
    for scenario in exercise.scenarios:
        written = [k for t in trials if t.scenario == scenario.name for k in reference[t.key].values]
        undeclared = sorted(set(written) - set(select(scenario.writes, written)))
        unwritten = [w for w in scenario.writes if not select((w,), written)]
        assert not undeclared and not unwritten, (scenario.name, undeclared, unwritten)
