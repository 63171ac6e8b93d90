"""Nothing an answer leaves behind in torch's global state changes what the grader observes (issue 29 §2).

`CHANGES` holds, for every row of the table (autograder/torch_state.py STATES), answer code that leaves that
piece of state changed; a test requires one for each row, and another scans torch for its global toggles
(getters with a setter beside them, `is_*_enabled`), each of which must be a row's or declared irrelevant, so
the next piece of global state torch grows is caught here. Through the real sandbox: every change made while
the answer loads is put back before the first trial observes anything (the answer checks it itself, from the
trial); every change a trial's call leaves fails that trial, naming it; what torch cannot put back fails the
load; a TorchFunctionMode left entered does not fake custom_inplace's observations; an honest mode inside a
`with` keeps 10/10."""

from __future__ import annotations

import re
import sys

import pytest
import torch

from autograder import torch_state
from tests.adversarial.conftest import broken_code, grade_files, needs_sandbox
from tests.conftest import solution_code

KEEP = "_kept = []\n"
"""Answer code keeps its context managers alive (`_kept`): one left to the garbage collector would exit."""

CHANGES: dict[str, str] = {
    "torch.set_default_device": "torch.set_default_device('meta')",
    "TorchFunctionMode stack": "from torch.overrides import TorchFunctionMode\n_kept.append(TorchFunctionMode())\n"
                               "_kept[-1].__enter__()",
    "DisableTorchFunction": "_kept.append(torch._C.DisableTorchFunction())\n_kept[-1].__enter__()",
    "TorchDispatchMode stack": "from torch.utils._python_dispatch import TorchDispatchMode\n"
                               "_kept.append(TorchDispatchMode())\n_kept[-1].__enter__()",
    "torch._C._set_dispatch_mode": "from torch._subclasses.fake_tensor import FakeTensorMode\n"
                                     "torch._C._set_dispatch_mode(FakeTensorMode())",
    "grad mode": "torch.set_grad_enabled(False)",
    "anomaly mode": "torch.autograd.set_detect_anomaly(True)",
    "default dtype": "torch.set_default_dtype(torch.float64)",
    "autocast": "torch.set_autocast_enabled('cpu', True)\ntorch.set_autocast_dtype('cpu', torch.float16)",
    "autocast cache": "torch.set_autocast_cache_enabled(False)",
    "deterministic algorithms": "torch.use_deterministic_algorithms(True, warn_only=True)",
    "saved_tensors_hooks": "_kept.append(torch.autograd.graph.saved_tensors_hooks(lambda t: t * 0, lambda t: t))\n"
                           "_kept[-1].__enter__()",
    "forward AD": "import torch.autograd.forward_ad as _fwad\n_fwad.enter_dual_level()",
    "torch.set_num_threads": "torch.set_num_threads(torch.get_num_threads() + 1)",
    "flush denormal": "torch.set_flush_denormal(True)",
    "print options": "torch.set_printoptions(precision=1)",
    "torch.set_float32_matmul_precision": "torch.set_float32_matmul_precision('medium')",
    "JIT tracing": "def _grab(x):\n    _kept.append(torch._C._get_tracing_state())\n    return x * 1\n"
                   "torch.jit.trace(_grab, torch.ones(1))\ntorch._C._set_tracing_state(_kept[0])",
    "autograd multithreading": "torch.autograd.set_multithreading_enabled(False)",
    "view replay": "torch._C._set_view_replay_enabled(True)",
    "grad_layout_enforcement": "torch._C._set_grad_layout_enforcement_enabled("
                               "not torch._C._is_grad_layout_enforcement_enabled())",
    "warn always": "torch.set_warn_always(True)",
    "inference mode": "_kept.append(torch.inference_mode())\n_kept[-1].__enter__()",
    "included DispatchKeys": "torch._C._dispatch_tls_set_dispatch_key_included(torch._C.DispatchKey.Negative, True)",
    "excluded DispatchKeys": "_kept.append(torch._C._AutoDispatchBelowAutograd())",
    "functorch transforms": "torch._C._functorch._grad_increment_nesting()",
}
"""Answer code that leaves each row changed; the flags of torch._C and nn.Module's registries are added below."""

for _state in torch_state.STATES:
    getter = f"torch._C._get_{_state.name}"
    if "._global_" in _state.name:
        module_name, registry = _state.name.rsplit(".", 1)
        value = getattr(sys.modules[module_name], registry)
        CHANGES[_state.name] = (
            f"import {module_name} as _m\n_m.{registry}[12345] = print" if isinstance(value, dict) else
            f"import {module_name} as _m\n_m.{registry} = 'changed'")
    elif _state.name.endswith(" attention"):
        kind = _state.name.removesuffix(" attention")
        CHANGES[_state.name] = f"torch._C._set_sdp_use_{kind}(not torch._C._get_{kind}_sdp_enabled())"
    elif _state.name in torch_state._FLAGS:
        value = getattr(torch._C, f"_get_{_state.name}")()
        if _state.name == "autograd_fallback_mode":
            new = "'nothing'"
        elif isinstance(value, bool):
            new = f"not {getter}()"
        elif isinstance(value, tuple):
            new = f"*[not v for v in {getter}()]"
        elif isinstance(value, str):
            new = "'native' if " + getter + "() != 'native' else 'auto'"
        elif _state.name == "sdp_priority_order":
            new = f"list(reversed({getter}()))"
        elif _state.name == "qengine":
            new = "[e for e in torch.backends.quantized.supported_engines if e != torch.backends.quantized.engine][0]"
            CHANGES[_state.name] = f"torch.backends.quantized.engine = {new}"
            continue
        elif isinstance(value, int):
            new = f"{getter}() + 1"
        else:  # None: not set
            new = "True" if "allow" in _state.name else "2"
        CHANGES[_state.name] = f"torch._C._set_{_state.name}({new})"

UNRESTORABLE = {s.name for s in torch_state.STATES if s.put is None}


def test_every_row_has_a_way_to_change_it():
    assert set(CHANGES) == {s.name for s in torch_state.STATES}


GETTER = re.compile(r"^_?(is|are)_\w+_enabled$|^_?get_\w+$")


def _toggles() -> set[str]:
    """torch's global getters: `is_*_enabled`, and each `get_X` with a `set_X` beside it, in torch, torch._C
    and torch._C._autograd."""
    spaces = {"torch": torch, "torch._C": torch._C, "torch._C._autograd": torch._C._autograd}
    found = set()
    for label, space in spaces.items():
        names = set(dir(space))
        setters = {re.sub(r"^_?set_", "", n) for n in names if re.match(r"^_?set_", n)}
        for name in names:
            if not GETTER.match(name):
                continue
            base = re.sub(r"^_?(get_|is_|are_)", "", name)
            if name.endswith("_enabled") or base in setters or base.removesuffix("_enabled") in setters:
                found.add(f"{label}.{name}")
    return found


def test_every_global_toggle_of_torch_is_a_row_or_declared_irrelevant():
    covered = {g for s in torch_state.STATES for g in s.getters} | set(torch_state.DECLARED)
    assert _toggles() - covered == set(), "a new piece of torch's global state: a row of torch_state.STATES, or " \
                                          "declared (torch_state.DECLARED) with the reason it changes no observation"


def test_every_global_registry_of_torch_is_a_row():
    """Module-level `_global_*` registries (nn.Module's hooks, an optimizer's step hooks) of every torch module
    loaded (the optimizers among them)."""
    import torch.optim  # noqa: F401

    found = {f"{module_name}.{name}" for module_name, module in list(sys.modules.items())
             if module_name.startswith("torch.") and module is not None
             for name in list(vars(module)) if name.startswith("_global_") and "hook" in name}
    assert found <= {s.name for s in torch_state.STATES}


@pytest.mark.parametrize("row", sorted(CHANGES))
def test_each_change_is_seen_and_put_back_or_named(row):
    """In this process, in a thread of its own (much of the state is per thread): the change is seen, and put
    back, or named as what could not be."""
    import threading

    said: dict[str, list[str]] = {}

    def run() -> None:
        baseline = torch_state.capture()
        scope = {"torch": torch, "__name__": "__answer__"}
        try:
            exec(KEEP + CHANGES[row], scope)
        except RuntimeError as e:  # this build of torch cannot change it: nor can an answer, here
            said["cannot"] = [str(e)]
        said["seen"] = torch_state.differing(baseline)
        said["left"] = torch_state.restore(baseline)
        scope.clear()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "cannot" in said or (row.startswith(torch_state._FLAGS) and not said["seen"] and _unchanged(row)):
        pytest.skip(f"this build of torch cannot change {row}: {said.get('cannot')}")
    assert row in said["seen"]
    assert said["left"] == ([row] if row in UNRESTORABLE else []) or (row in UNRESTORABLE and row in said["left"])


def _unchanged(row: str) -> bool:
    """Whether torch's own getter of the flag `row` still says what it said (the change had no effect)."""
    getter, baseline = getattr(torch._C, f"_get_{row}"), torch_state.capture()
    before = getter()
    try:
        exec(KEEP + CHANGES[row], {"torch": torch})
    except RuntimeError:
        return True
    after = getter()
    torch_state.restore(baseline)
    return after == before


BASELINE_CHECK = '''
from autograder import torch_state as _torch_state
_baseline = _torch_state.capture()
'''
CHECKED_CALL = '''
_forward = ResidualBlock.forward
def _checked(self, x):
    left = _torch_state.differing(_baseline)
    if left:
        raise RuntimeError("UNRESTORED " + ", ".join(left))
    return _forward(self, x)
ResidualBlock.forward = _checked
'''
LEAVES = '''
_forward = ResidualBlock.forward
def _leaving(self, x):
    out = _forward(self, x)
    out = out.detach().clone().requires_grad_(True) * 1
{changes}
    return out
ResidualBlock.forward = _leaving
'''


SELF_ENDING = {"JIT tracing": "the grader's next operation raises under a trace it did not start, and torch abandons "
                              "the trace at that error: the trial fails, with torch's error"}
"""Rows whose change ends itself at the scenario's next observation, which it makes fail (the trial scores 0)."""


def _indent(code: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in code.splitlines())


def _tried(code: str) -> str:
    """`code`, where this build of torch may refuse it (a flag it lacks): nor can an answer change it then."""
    return f"try:\n{_indent(code)}\nexcept Exception:\n    pass"


def _changeable() -> list[str]:
    """The rows answer code can restore-ably change on this build of torch."""
    return [row for row in sorted(CHANGES) if row not in UNRESTORABLE
            and not (row in torch_state._FLAGS and _unchanged(row))]


@pytest.fixture(scope="module")
def graded(pool, tmp_path_factory):
    """Through the real sandbox, on residual_add: every restorable change at load, checked from the trials;
    every restorable change left by each call; each unrestorable one at load; an honest classmate after each."""
    solution = solution_code("residual_add")
    restorable = _changeable()
    changes = "\n".join(_tried(CHANGES[r]) for r in restorable)
    files = {"at_load.py": "import torch\n" + BASELINE_CHECK + KEEP + changes + "\n" + solution + CHECKED_CALL,
             "honest_after_load.py": solution}
    for i, row in enumerate(restorable):  # one file each: the feedback shows a bounded part of the message
        files[f"in_call_{i}.py"] = KEEP + solution + "\nimport torch\n" + LEAVES.format(
            changes=_indent(_tried(CHANGES[row])))
    files["honest_after_call.py"] = solution
    for i, row in enumerate(sorted(UNRESTORABLE)):
        files[f"unrestorable_{i}.py"] = "import torch\n" + KEEP + CHANGES[row] + "\n" + solution
        files[f"honest_after_{i}.py"] = solution
    folder = tmp_path_factory.mktemp("globals")
    return restorable, grade_files(pool, folder, folder / "out", files, "residual_add")


def _text(result: dict) -> str:
    return str(result)


@needs_sandbox
def test_what_loading_leaves_is_put_back_before_any_trial(graded):
    _, results = graded
    assert results["at_load.py"]["status"] == "passed", _text(results["at_load.py"])
    assert results["honest_after_load.py"]["status"] == "passed"


@needs_sandbox
def test_what_a_call_leaves_fails_its_trial_naming_each_piece(graded):
    restorable, results = graded
    for i, row in enumerate(restorable):
        left = results[f"in_call_{i}.py"]
        assert left["status"] != "passed" and left["score"] == 0, (row, _text(left))
        if row not in SELF_ENDING:
            named = re.search(r"global state changed when it returned \(([^)]*)", _text(left))
            assert named and row in named[1].split(", "), (row, _text(left))
    assert results["honest_after_call.py"]["status"] == "passed", _text(results["honest_after_call.py"])


@needs_sandbox
def test_what_torch_cannot_put_back_is_refused(graded):
    _, results = graded
    for i, row in enumerate(sorted(UNRESTORABLE)):
        refused = results[f"unrestorable_{i}.py"]
        assert refused["status"] != "passed" and row in _text(refused), (row, _text(refused))
        assert results[f"honest_after_{i}.py"]["status"] == "passed", _text(results[f"honest_after_{i}.py"])


FAKING_MODE = '''
from torch.autograd.function import BackwardCFunction
from torch.overrides import TorchFunctionMode

class _Node(BackwardCFunction):
    pass

_Node.__name__ = "PReLU_Backward"
_VERSION, _GRAD_FN = torch.Tensor._version.__get__, torch.Tensor.grad_fn.__get__

class _Faking(TorchFunctionMode):
    """Answers the scenario's own observations: a version counter that advances by 10 at each look (so the
    write looks visible to autograd), and a custom node for any grad_fn."""
    reads = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func == _VERSION:
            _Faking.reads += 1
            return 10 * _Faking.reads
        if func == _GRAD_FN:
            return _Node()
        return func(*args, **kwargs)

_faking = _Faking()
'''
LEFT_IN_CALL = '''
_prelu = prelu_
def prelu_(x, weight):
    y = _prelu(x, weight)
    _faking.__enter__()
    return y
'''
AT_LOAD = "\n_faking.__enter__()\n"
HONEST_MODE = '''
from torch.overrides import TorchFunctionMode

class _Counting(TorchFunctionMode):
    calls = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        _Counting.calls += 1
        return func(*args, **(kwargs or {}))

_prelu = prelu_
def prelu_(x, weight):
    with _Counting():
        return _prelu(x, weight)
'''


@pytest.fixture(scope="module")
def modes(pool, tmp_path_factory):
    broken, solution = broken_code("custom_inplace"), solution_code("custom_inplace")
    files = {"broken.py": broken, "mode_in_call.py": broken + FAKING_MODE + LEFT_IN_CALL,
             "mode_at_load.py": broken + FAKING_MODE + AT_LOAD, "honest_mode.py": solution + HONEST_MODE,
             "solution_mode_at_load.py": solution + FAKING_MODE + AT_LOAD, "honest.py": solution}
    folder = tmp_path_factory.mktemp("modes")
    return grade_files(pool, folder, folder / "out", files, "custom_inplace")


@needs_sandbox
def test_a_mode_left_entered_fakes_no_observation(modes):
    score = {name: (r["status"], r.get("score"), r.get("max_score")) for name, r in modes.items()}
    assert modes["broken.py"]["status"] != "passed", score
    for name in ("mode_in_call.py", "mode_at_load.py"):
        assert modes[name]["score"] <= modes["broken.py"]["score"], score
    assert "TorchFunctionMode stack" in _text(modes["mode_in_call.py"])
    assert modes["solution_mode_at_load.py"]["status"] == "passed", score  # put back before any trial


@needs_sandbox
def test_an_honest_mode_inside_a_with_keeps_full_marks(modes):
    for name in ("honest_mode.py", "honest.py"):
        assert modes[name]["status"] == "passed", _text(modes[name])
        assert modes[name]["score"] == modes[name]["max_score"], _text(modes[name])


def _first_outcome(code: str):
    """custom_inplace's first public trial of `code`, in this process, in a thread of its own (as a job's step)."""
    import threading

    from autograder import harness
    from autograder.exercises import get
    from autograder.trials import draw, plan

    exercise = get("custom_inplace")
    trials = plan(exercise, ("cpu",), True)
    inputs = draw(exercise, trials, 0)
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("r", harness.run_answer(exercise, code, trials, inputs)))
    thread.start()
    thread.join()
    return next(iter(out["r"].outcomes.values()))


def test_the_attack_is_live_the_table_is_what_stops_it(monkeypatch):
    """The faking mode does fake an observation where the harness does not compare the state (so the sandbox
    tests above are not vacuous); with the comparison, the trial observes nothing and fails."""
    attack = broken_code("custom_inplace") + FAKING_MODE + LEFT_IN_CALL
    assert _first_outcome(broken_code("custom_inplace")).values["version advanced"] is False
    stopped = _first_outcome(attack)
    assert stopped.values == {} and stopped.error.type == "GlobalStateError"
    monkeypatch.setattr(torch_state, "differing", lambda baseline: [])
    assert _first_outcome(attack).values["version advanced"] is True
