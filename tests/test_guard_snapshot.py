"""The guard's snapshot: after every step it compares identities; at the end of a phase (`deep`) also the
code and defaults of the grader's and torch's functions. Run here without the audit hook, which in a
worker refuses a code swap at once."""

import torch

import autograder.harness as harness
from autograder.runner.guard import Snapshot


def test_identity_after_every_step_code_and_defaults_at_the_end_of_a_phase():
    snapshot = Snapshot()
    assert snapshot.changed() == [] and snapshot.changed(deep=False) == []
    code, defaults = harness.run_trial.__code__, harness.run_trial.__defaults__
    try:
        harness.run_trial.__code__ = (lambda *a, **k: {}).__code__
        assert snapshot.changed(deep=False) == []
        assert any(line.endswith(".run_trial") for line in snapshot.changed())
    finally:
        harness.run_trial.__code__ = code
    try:
        harness.run_trial.__defaults__ = ()
        assert any(line.endswith(".run_trial") for line in snapshot.changed())
    finally:
        harness.run_trial.__defaults__ = defaults
    original = torch.allclose
    try:
        torch.allclose = lambda *a, **k: True
        assert any(line.endswith(".allclose") for line in snapshot.changed(deep=False))
    finally:
        torch.allclose = original
    assert snapshot.changed() == []
