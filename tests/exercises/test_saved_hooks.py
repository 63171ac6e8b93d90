"""Exercise 10 (saved_hooks): its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/saved_hooks.py, and tests/exercises/test_catalogue.py grades every entry."""

import re
import weakref

import pytest
import torch
from torch.autograd.graph import save_on_cpu, saved_tensors_hooks

from autograder.core.messages import INPLACE_ERROR
from autograder.exercises import saved_hooks as spec
from autograder.reference_store import known_submissions, load_reference
from tests.conftest import failing

ID = "saved_hooks"
KNOWN = known_submissions(ID)


def said(result, check: str) -> str:
    return next(t.output for t in result.tests if t.name == check)


def leaves(scenario: str, dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor]:
    """A scenario's inputs, drawn as the grader draws them, with their weights as leaves that require grad."""
    return spec._leaves(spec.EXERCISE.scenario(scenario).draw(torch.Generator().manual_seed(0), dtype))


def test_broken_starter_earns_nothing_and_is_told_the_line(grade):
    result = grade(ID, KNOWN.broken)
    assert result.score == 0 and failing(result) == {c.name for c in spec.EXERCISE.checks}
    catches = said(result, "catches in-place")
    # the line of the program that changed the saved tensor, and what to do about it
    assert "`y.mul_(2)`" in catches and "backward ran without an error under your hooks" in catches
    assert "unpack_hook must compare the version" in catches
    assert said(result, "honest gradients").startswith("Not counted yet: ")  # right, but it catches nothing


@pytest.mark.parametrize("scenario", spec.DISHONEST)
def test_dishonest_programs_raise_without_hooks_and_pass_silently_under_save_on_cpu(scenario):
    program = spec.DISHONEST_PROGRAMS[scenario]
    with pytest.raises(RuntimeError, match=INPLACE_ERROR.pattern):
        program(leaves(scenario)).backward()
    with save_on_cpu():  # on the CPU: the tensor itself, and no version check
        loss = program(leaves(scenario))
    loss.backward()


@pytest.mark.parametrize("scenario", spec.HONEST)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_reference_hooks_give_plain_autograd_gradients_exactly(scenario, dtype):
    reference = load_reference(ID)
    program = spec.HONEST_PROGRAMS[scenario]
    plain, hooked = leaves(scenario, dtype), leaves(scenario, dtype)
    program(plain).backward()
    with saved_tensors_hooks(reference["pack_hook"], reference["unpack_hook"]):
        loss = program(hooked)
    loss.backward()
    grads = [name for name, t in plain.items() if t.requires_grad]
    assert grads
    for name in grads:
        assert torch.equal(plain[name].grad, hooked[name].grad), name


def test_the_watch_finds_tensors_in_containers_but_not_behind_weak_references():
    a, b, c = torch.zeros(1), torch.ones(2), torch.full((3,), 2.0)

    class Slotted:
        __slots__ = ("kept",)

        def __init__(self, kept):
            self.kept = kept

    class Plain:
        def __init__(self):
            self.inside = {"b": [b]}

    packed = (a, Slotted(Plain()), {"c": (c,)}, weakref.ref(a), lambda: c)
    found = list(spec._tensors_in(packed))
    assert sorted(t.numel() for t in found) == [1, 2, 3]


ALIAS = "a detached alias and its version"
LEAVES_UNCHECKED = KNOWN.correct[ALIAS].replace(
    "    return tensor.detach(), tensor._version\n",
    "    if tensor.grad_fn is None:  # a leaf: never changed, surely\n"
    "        return tensor.detach().clone(), 0\n"
    "    return tensor.detach(), tensor._version\n")


def test_a_miss_on_hidden_programs_names_the_program_and_no_value(grade):
    assert LEAVES_UNCHECKED != KNOWN.correct[ALIAS]
    assert grade(ID, LEAVES_UNCHECKED, public_only=True).score == 10  # the public programs change no leaf
    result = grade(ID, LEAVES_UNCHECKED)
    assert result.score == 0  # the gate: a dishonest program not caught
    catches = said(result, "catches in-place")
    assert "on hidden inputs: scenario 'input changed'" in catches
    assert "`x.mul_(0.5)`" in catches and "backward ran without an error under your hooks" in catches
    assert not re.search(r"\d\.\d", catches.replace("x.mul_(0.5)", ""))  # no value of the hidden inputs


def test_an_honest_program_that_raises_is_told_the_answer_line_and_the_rule(grade):
    code, _ = KNOWN.wrong["expects version 0"]
    honest = said(grade(ID, code), "honest gradients")
    assert "scenario 'mlp'" in honest and "line" in honest
    assert "raise RuntimeError" in honest  # the answer's line that raised
    assert "saved at a version above 0" in honest


def test_a_weak_reference_is_told_that_the_changed_tensor_may_be_gone(grade):
    code, _ = KNOWN.wrong["weak reference to the tensor"]
    assert "may be gone by the time backward runs" in said(grade(ID, code), "catches in-place")


@pytest.mark.parametrize("seed", range(6))
def test_the_reference_catches_every_change_with_pytorchs_wording_and_versions(seed):
    """The versions each dishonest program's error must name (expected_versions) are PyTorch's own, without hooks,
    and the reference's, with them, whatever number of writes the salt draws."""
    reference = load_reference(ID)
    for scenario, program in spec.DISHONEST_PROGRAMS.items():
        inputs = spec.EXERCISE.scenario(scenario).draw(torch.Generator().manual_seed(seed), torch.float64)
        found, expected = spec.expected_versions(scenario, inputs)
        with pytest.raises(RuntimeError, match=f"is at version {found}; expected version {expected} instead"):
            program(spec._leaves(inputs)).backward()
        with saved_tensors_hooks(reference["pack_hook"], reference["unpack_hook"]):
            loss = program(spec._leaves(spec.EXERCISE.scenario(scenario).draw(
                torch.Generator().manual_seed(seed), torch.float64)))
        with pytest.raises(RuntimeError, match=INPLACE_ERROR.pattern) as info:
            loss.backward()
        assert f"is at version {found}; expected version {expected} instead" in str(info.value)


def test_a_subclass_of_runtime_error_is_as_good(grade):
    assert grade(ID, KNOWN.correct["a RuntimeError subclass of its own"]).score == 10
