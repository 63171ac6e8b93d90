"""The guard's snapshot: after every step it compares identities; at the end of a phase (`deep`) also the
code and defaults of the grader's and torch's functions. Run here without the audit hook, which in a
worker refuses a code swap at once."""

import torch

import autograder.harness as harness
from autograder.runner.worker.guard import Snapshot


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


LAZY_DYNAMO = r'''
import functools, json, sys
import torch
import autograder.harness  # noqa: F401 - the grader's modules, as in a worker
from autograder.runner.worker.guard import Snapshot

assert "torch._dynamo" not in sys.modules, "this check needs a process where torch has not imported dynamo"
snapshot = Snapshot()
original = torch.manual_seed
found = {}
p = torch.zeros(2, requires_grad=True)
p.sum().backward()
torch.optim.SGD([p], lr=0.1).step()  # torch imports dynamo, which rebinds torch.manual_seed
found["dynamo loaded by the step"] = "torch._dynamo" in sys.modules
found["torch rebound manual_seed"] = torch.manual_seed is not original
found["after torch's own rebinding"] = snapshot.changed()
torch.manual_seed(3)  # the wrapper's first call caches dynamo's disable on the function: still nothing
found["after a call through it"] = snapshot.changed()
attempts = {
    "a wrapper of one's own": functools.wraps(original)(lambda *a, **k: None),
    "torch's wrapper around another function": torch._disable_dynamo(functools.wraps(original)(lambda *a, **k: None)),
    "torch's wrapper, not recursive": torch._disable_dynamo(original, recursive=False),
}
swapped = torch._disable_dynamo(original)
swapped.__closure__[swapped.__code__.co_freevars.index("fn")].cell_contents = lambda *a, **k: None
attempts["torch's wrapper with its target swapped"] = swapped
for name, value in attempts.items():
    torch.manual_seed = value
    found[name] = snapshot.changed(deep=False)
print(json.dumps(found))
'''


def test_torchs_own_lazy_rebinding_is_accepted_and_nothing_like_it():
    """A worker warmed for an exercise without optimizers has not imported dynamo: an answer's optimizer step
    makes torch import it, which rebinds torch.manual_seed. That is not tampering; anything else put there is."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LAZY_DYNAMO], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found.pop("dynamo loaded by the step") and found.pop("torch rebound manual_seed")
    assert found.pop("after torch's own rebinding") == [] and found.pop("after a call through it") == []
    assert found == {name: ["torch.manual_seed"] for name in found} and len(found) == 4, found


COMPILES = r'''
import json, types
import torch
from autograder.runner.worker.guard import Snapshot

snapshot = Snapshot()
found = {}
init, setstate = torch.nn.Module.__init__, torch.nn.Module.__setstate__
add = torch.compile(lambda a, b: a + b, backend="eager")
found["compiled and ran"] = torch.equal(add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
found["torch rebound Module.__init__"] = torch.nn.Module.__init__ is not init
found["after torch.compile"] = snapshot.changed(deep=True)
patched = torch.nn.Module.__init__
attempts = {
    "its code, other globals": types.FunctionType(patched.__code__, {"GenerationTracker": None}, "patched_init",
                                                  None, patched.__closure__),
    "its code, closed over another function": types.FunctionType(patched.__code__, patched.__globals__,
                                                                  "patched_init", None, (types.CellType(len),)),
    "a look-alike": lambda self, *a, **k: init(self, *a, **k),
}
for name, value in attempts.items():
    torch.nn.Module.__init__ = value
    found[name] = snapshot.changed(deep=True)
print(json.dumps(found))
'''


def test_torch_compiles_own_patch_is_accepted_and_nothing_like_it():
    """torch.compile's first compilation wraps nn.Module.__init__ and __setstate__ (dynamo's generation tags):
    an honest answer that compiles a function is not tampering; the same code with other globals or closed over
    something else, or any other function there, is."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", COMPILES], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found.pop("compiled and ran") and found.pop("torch rebound Module.__init__")
    assert found.pop("after torch.compile") == []
    assert found == {name: ["torch.nn.Module.__init__"] for name in found} and len(found) == 3, found


def test_the_rows_of_torchs_global_state_are_guarded_like_the_grader():
    """A row's functions (torch_state.STATES), which the harness calls in the answer's thread, cannot be
    swapped for ones that always say "unchanged": the snapshot holds them by identity. And what the guard's own
    thread sees of the state is compared after every step."""
    from autograder import torch_state

    snapshot = Snapshot()
    row = torch_state.STATES[0]
    read = row.read
    object.__setattr__(row, "read", lambda: None)
    try:
        assert f"torch_state[{row.name}].read" in snapshot.changed(deep=False)
    finally:
        object.__setattr__(row, "read", read)
    assert snapshot.changed(deep=False) == []
    assert torch_state.differing(snapshot.torch_state) == []
    torch.set_default_dtype(torch.float64)
    try:
        assert torch_state.differing(snapshot.torch_state) == ["default dtype"]
    finally:
        torch.set_default_dtype(torch.float32)
