"""leaf_sgd: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG, SAYS) is in
references/leaf_sgd.py, and tests/exercises/test_catalogue.py grades every entry."""

import torch

from autograder.exercises import get
from autograder.reference_store import known_submissions, load_reference
from tests.conftest import failing

ID = "leaf_sgd"
BROKEN = known_submissions(ID).broken


def test_broken_starter_scores_nothing_and_is_told_the_line(grade):
    result = grade(ID, BROKEN)
    assert result.score == 0
    assert {"values", "same tensors", "several steps", "momentum buffers"} <= failing(result)
    said = next(t.output for t in result.tests if t.name == "values")
    assert "leaf Variable that requires grad" in said and "(`p -= lr * buf`)" in said
    assert "torch.no_grad()" in said


def test_the_reference_is_torch_sgd_from_its_own_first_step():
    """The reference hands torch.optim.SGD the caller's buffers; from zero buffers that is torch's own first
    step (buf = d_p), so three steps match an optimizer that made its buffers itself, bit for bit."""
    exercise = get(ID)
    scenario = exercise.scenario("linear layers")  # zero buffers: the start of training
    inputs = scenario.draw(torch.Generator().manual_seed(7), torch.float64)
    seen = {}
    scenario.run(load_reference(ID), dict(inputs), torch.device("cpu"), seen)

    optimizers = {}

    def own_state(params, buffers, lr, momentum, weight_decay):
        opt = optimizers.setdefault("sgd", torch.optim.SGD(params, lr=lr, momentum=momentum,
                                                            weight_decay=weight_decay))
        opt.step()
        opt.zero_grad()
        for buf, p in zip(buffers, params):  # what the observer reads as the caller's buffers
            buf.copy_(opt.state[p]["momentum_buffer"])

    inputs = scenario.draw(torch.Generator().manual_seed(7), torch.float64)
    theirs = {}
    scenario.run({"sgd_step": own_state}, dict(inputs), torch.device("cpu"), theirs)
    values = [k for k in seen if isinstance(seen[k], torch.Tensor)]  # parameters and buffers after steps
    assert values and all(torch.equal(seen[k], theirs[k]) for k in values)


def test_a_step_that_goes_wrong_later_is_caught_after_every_step(grade):
    """The identity, leaf, history and grad observations must hold after each of the three steps, not only
    the first: here the buffers get a history from the second call on."""
    code = '''import torch

calls = []


def sgd_step(params, buffers, lr, momentum, weight_decay):
    calls.append(1)
    for p, buf in zip(params, buffers):
        if len(calls) % 3 == 1:
            with torch.no_grad():
                buf.mul_(momentum).add_(p.grad + weight_decay * p)
        else:
            buf.mul_(momentum).add_(p.grad + weight_decay * p)
        with torch.no_grad():
            p -= lr * buf
        p.grad = None
'''
    result = grade(ID, code)
    assert failing(result) == {"momentum buffers"}
    assert "grad_fn" in next(t.output for t in result.tests if t.name == "momentum buffers")


def test_grads_zeroed_are_told_about_none(grade):
    code, _ = known_submissions(ID).wrong["gradients zeroed, not set to None"]
    said = next(t.output for t in grade(ID, code).tests if t.name == "grads cleared")
    assert "`p.grad = None`" in said and "zero_grad()" in said
