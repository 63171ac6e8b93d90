"""Exercise 10: saved-tensor hooks that keep PyTorch's version check.

`torch.autograd.graph.saved_tensors_hooks(pack, unpack)` makes autograd keep what `pack` returns instead of the
tensor, and hand backward what `unpack` makes of it. With hooks installed PyTorch skips its version check: any
hooks, even ones that change nothing, and `save_on_cpu` on the CPU (where `.cpu()` is the tensor itself) turns
the in-place error into a wrong gradient. The student writes `pack_hook(tensor)` and `unpack_hook(packed)` that
give the program its gradient, or PyTorch's error, with or without them: what the course teaches is enough
(`detach()` shares the version counter, `_version` reads it). The grader runs programs of its own under them,
through a watch of its own around the two hooks: honest ones (right gradients; what pack returns holds no
history, which would make a reference cycle of a saved output; unpack gives back the shape, dtype, device and
values), dishonest ones (a saved tensor changed in place after it was saved: backward must raise a
RuntimeError, a subclass of one being as good, that says the two versions in PyTorch's words, `is at version
N; expected version M`; how many writes come before the save and after it is drawn per salt, so no fixed
number passes), and a tensor saved twice in a graph run backward twice. Nothing counts until honest programs
get their gradients and dishonest ones are caught (the gate).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import torch
from torch.autograd.graph import saved_tensors_hooks

from .. import probes
from ..core import checks
from ..core.evidence import Evidence, failed
from ..core.messages import INPLACE_ERROR
from ..core.spec import PASS, Check, Exercise, ExpectedError, Rule, Scenario, Symbol, Verdict
from ..feedback.wording import exercise_say, exercise_text
from ..probes import GRAD
from . import _contract as contract

PACK_CALLS, UNPACK_CALLS = "pack calls", "unpack calls"
NO_HISTORY = "no history"
SAME_KIND, SAME_VALUES = "unpacked dtype and device", "unpacked values"
RAISED, MESSAGE = "backward raised", "its message"
CAUGHT_AFTER_REUSE = "caught after reuse"
NOTHING, A_RUNTIME_ERROR = "nothing", "RuntimeError"
WATCHED = (PACK_CALLS, UNPACK_CALLS, NO_HISTORY, SAME_KIND, SAME_VALUES)

_SAYS_IN_PLACE = re.compile(r"in[- ]?place|version|modified", re.IGNORECASE)
VERSIONS = re.compile(r"is at version (\d+); expected version (\d+)")
"""The part of PyTorch's message that says the versions; the notebook asks for these words."""
MESSAGE_BOUND = 2000
"""How much of the message a dishonest program's backward raised is kept (it is the student's text)."""


# --- the grader's watch around the student's hooks ---------------------------------------------------------

def _tensors_in(obj: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    """The tensors a packed object holds: in tuples, lists, sets, dicts, and the attributes of plain objects
    (never through a weak reference: calling one would give back the tensor it points to)."""
    if depth > 6:
        return
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list, set, frozenset)):
        for item in obj:
            yield from _tensors_in(item, depth + 1)
    elif isinstance(obj, dict):
        for item in (*obj.keys(), *obj.values()):
            yield from _tensors_in(item, depth + 1)
    elif not isinstance(obj, (str, bytes, int, float, complex, bool, type(None), type)) and not callable(obj):
        attributes = dict(getattr(obj, "__dict__", {}))
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if isinstance(slot, str) and slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                    attributes[slot] = getattr(obj, slot)
        for item in attributes.values():
            yield from _tensors_in(item, depth + 1)


class _Box:
    """What autograd keeps under the watch: the student's packed object, and what the grader knows of the
    saved tensor (never the tensor itself: that would keep it alive)."""

    __slots__ = ("packed", "shape", "dtype", "device", "values")
    packed: Any
    shape: tuple[int, ...]
    dtype: torch.dtype
    device: torch.device
    values: torch.Tensor


class _HookCounter:
    """The student's pack_hook and unpack_hook, called through the grader's own, which count the calls and
    look at what comes out of each."""

    def __init__(self, ns: Any, inputs: dict[str, torch.Tensor]) -> None:
        self.pack_hook, self.unpack_hook = ns["pack_hook"], ns["unpack_hook"]
        self.packs = self.unpacks = 0
        self.no_history = self.same_kind = self.same_values = True

    def hooks(self) -> saved_tensors_hooks:
        return saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor: torch.Tensor) -> _Box:
        self.packs += 1
        box = _Box()
        box.shape, box.dtype, box.device = tuple(tensor.shape), tensor.dtype, tensor.device
        box.values = tensor.detach().clone()
        box.packed = self.pack_hook(tensor)
        for held in _tensors_in(box.packed):
            if held.requires_grad:
                self.no_history = False
        return box

    def _unpack(self, box: _Box) -> torch.Tensor:
        self.unpacks += 1
        tensor = self.unpack_hook(box.packed)
        if not isinstance(tensor, torch.Tensor):
            self.same_kind = self.same_values = False
            return tensor
        if (tuple(tensor.shape), tensor.dtype, tensor.device) != (box.shape, box.dtype, box.device):
            self.same_kind = False
        if tensor.dtype != box.dtype or tuple(tensor.shape) != box.shape or not torch.equal(
                tensor.detach().to(box.values.device), box.values):
            self.same_values = False
        return tensor

    def observe_packs(self, obs: dict[str, Any]) -> None:
        """After forward: how often pack_hook ran, and what it returned."""
        obs[PACK_CALLS], obs[NO_HISTORY] = self.packs, self.no_history

    def observe_unpacks(self, obs: dict[str, Any]) -> None:
        """After backward: how often unpack_hook ran, and what it gave back."""
        obs[UNPACK_CALLS], obs[SAME_KIND], obs[SAME_VALUES] = self.unpacks, self.same_kind, self.same_values


# --- the programs run under the hooks ------------------------------------------------------------------------
# Each takes the trial's tensors (parameters already requiring grad) and returns the loss alone, so that every
# intermediate tensor is dropped by the end of forward, as in a training step: only autograd keeps anything.

Program = Callable[[dict[str, torch.Tensor]], torch.Tensor]


def _mlp(p: dict[str, torch.Tensor]) -> torch.Tensor:
    h = torch.relu_(p["x"] @ p["w1"] + p["b1"])  # in place before anything saved h: relu_ saves it at version 1
    return (torch.sigmoid(h @ p["w2"] + p["b2"]) * p["grad_output"]).sum()


def _in_place_before_saving(p: dict[str, torch.Tensor]) -> torch.Tensor:
    h = p["x"] @ p["w1"]  # mm saves x (for w1's gradient), not h
    h.add_(p["b1"])
    h.relu_()  # saves h, at version 2
    z = h @ p["w2"]  # saves h, at version 2
    z += p["b2"]
    return (torch.tanh(z) * p["grad_output"]).sum()


def _views(p: dict[str, torch.Tensor]) -> torch.Tensor:
    x = p["x"]
    b, n = x.shape
    h = x * 1.5
    h[:, 0] += 1  # in place through a view, before anything saved h
    s = h.view(b, 2, n // 2).transpose(1, 2)[:, 1:]  # views of h
    y = s.exp()  # saves its output
    z = y * s  # saves y, and the view s (at version 1)
    w = torch.cat([z.flatten(1), h], dim=1)[:, ::2]  # a strided view of a new tensor
    return (w.sin() * p["grad_output"]).sum()  # saves that view


# Each dishonest program writes the saved tensor `after` times once it was saved (`writes after`, drawn per salt)
# and, where it can, `before` times before (`writes before`): it is saved at version `before`, found at
# `before + after` (EXPECTED_FOUND).

def _times(n: torch.Tensor | int) -> range:
    return range(int(n))


def _output_changed(p: dict[str, torch.Tensor]) -> torch.Tensor:
    y = torch.sigmoid(p["x"] @ p["w1"])  # sigmoid saves its output y
    for _ in _times(p["writes after"]):
        y.mul_(2)
    return (y * p["grad_output"]).sum()


def _view_of_output_changed(p: dict[str, torch.Tensor]) -> torch.Tensor:
    y = torch.exp(p["x"] @ p["w1"])  # exp saves its output y
    for _ in _times(p["writes after"]):
        y[:, 0].zero_()
    return (y * p["grad_output"]).sum()


def _input_changed(p: dict[str, torch.Tensor]) -> torch.Tensor:
    for _ in _times(p["writes before"]):
        p["x"].add_(0.25)
    h = p["x"] @ p["w1"]  # mm saves x, for w1's gradient
    for _ in _times(p["writes after"]):
        p["x"].mul_(0.5)
    return (torch.tanh(h) * p["grad_output"]).sum()


def _base_of_saved_view_changed(p: dict[str, torch.Tensor]) -> torch.Tensor:
    b = p["x"] * 1
    for _ in _times(p["writes before"]):
        b.add_(0.25)
    y = b[:, 1:].sin()  # sin saves the view b[:, 1:], which nothing else keeps
    for _ in _times(p["writes after"]):
        b.mul_(2)
    return (y * p["grad_output"][:, 1:]).sum()


def _saved_twice_then_changed(p: dict[str, torch.Tensor]) -> torch.Tensor:
    h = torch.relu(p["x"] @ p["w1"])  # relu saves h
    z = h @ p["w2"]  # and mm saves h again
    for _ in _times(p["writes after"]):
        h.mul_(0.5)
    return (z * p["grad_output"]).sum()


# What each dishonest program does, as its feedback says it: the line that changes a saved tensor.
CHANGES = {
    "output changed": "`y = torch.sigmoid(x @ w1)` saved y, then `y.mul_(2)` changed it in place",
    "view of the output changed": "`y = torch.exp(x @ w1)` saved y, then `y[:, 0].zero_()` changed it through a "
                                  "view",
    "input changed": "`h = x @ w1` saved x (changed in place before, too), then `x.mul_(0.5)` changed it in place",
    "base of a saved view changed": "`y = b[:, 1:].sin()` saved the view `b[:, 1:]` (b changed in place before, "
                                    "too), then `b.mul_(2)` changed the tensor it views",
    "saved twice, then changed": "`h = torch.relu(x @ w1)` and `z = h @ w2` saved h, then `h.mul_(0.5)` changed it",
}
WRITES_BEFORE = ("input changed", "base of a saved view changed")
"""The programs that also write the tensor before it is saved (so that it is saved at a version above 0)."""


def expected_versions(program: str, inputs: dict[str, Any]) -> tuple[int, int]:
    """(found, expected): the versions PyTorch's message would name for `program` on these inputs."""
    before = int(inputs["writes before"]) if program in WRITES_BEFORE else 0
    return before + int(inputs["writes after"]), before


# --- inputs ---------------------------------------------------------------------------------------------------

def _randn(g: torch.Generator, dtype: torch.dtype, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def _mlp_drawer(batch: int, n_in: int, hidden: int, n_out: int, x_requires_grad: bool = True):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "x_requires_grad": x_requires_grad,
            "x": _randn(g, dtype, batch, n_in),
            "w1": _randn(g, dtype, n_in, hidden, scale=n_in ** -0.5),
            "b1": _randn(g, dtype, hidden, scale=0.5),
            "w2": _randn(g, dtype, hidden, n_out, scale=hidden ** -0.5),
            "b2": _randn(g, dtype, n_out, scale=0.5),
            "grad_output": _randn(g, dtype, batch, n_out),
        }

    return draw


def _layer_drawer(batch: int, n_in: int, n_out: int, x_requires_grad: bool = True):
    """x and one weight, for the dishonest programs; w2 for the one that saves h twice; how many in-place writes
    come before the save (0 to 2) and after it (1 to 3), per salt."""

    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {
            "writes before": int(torch.randint(0, 3, (), generator=g)),
            "writes after": int(torch.randint(1, 4, (), generator=g)),
            "x_requires_grad": x_requires_grad,
            "x": _randn(g, dtype, batch, n_in),
            "w1": _randn(g, dtype, n_in, n_out, scale=n_in ** -0.5),
            "w2": _randn(g, dtype, n_out, n_out, scale=n_out ** -0.5),
            "grad_output": _randn(g, dtype, batch, n_out),
        }

    return draw


def _views_drawer(batch: int, n: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {"x_requires_grad": True, "x": _randn(g, dtype, batch, n),
                "grad_output": _randn(g, dtype, batch, n - 1)}

    return draw


def _pair_drawer(batch: int, n: int):
    def draw(g: torch.Generator, dtype: torch.dtype) -> dict[str, Any]:
        return {"x_requires_grad": True, "x": _randn(g, dtype, batch, n), "grad_output": _randn(g, dtype, batch, n)}

    return draw


def _leaves(inputs: dict[str, Any]) -> dict[str, Any]:
    """The trial's tensors, each weight a leaf that requires grad; x requires grad as the scenario says; and the
    counts of writes, where the scenario draws them."""
    p: dict[str, Any] = {k: v for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    p.update({k: inputs[k] for k in ("writes before", "writes after") if k in inputs})
    for name in ("w1", "b1", "w2", "b2"):
        if name in p:
            p[name].requires_grad_(True)
    p["x"].requires_grad_(bool(inputs["x_requires_grad"]))
    return p


def _observe_grads(obs: dict[str, Any], p: dict[str, torch.Tensor]) -> None:
    for name in ("x", "w1", "b1", "w2", "b2"):
        if name in p and p[name].requires_grad:
            probes.observe_grad(obs, name, p[name])


# --- scenarios ------------------------------------------------------------------------------------------------

def _honest(program: Program):
    def run(ns, inputs, device, obs):
        p = _leaves(inputs)
        watch = _HookCounter(ns, p)
        with watch.hooks():
            loss = program(p)
        watch.observe_packs(obs)
        loss.backward()
        watch.observe_unpacks(obs)
        _observe_grads(obs, p)

    return run


HONEST_WRITES = (GRAD, *WATCHED)


def _dishonest(program: Program):
    def run(ns, inputs, device, obs):
        p = _leaves(inputs)
        watch = _HookCounter(ns, p)
        with watch.hooks():
            loss = program(p)
        try:
            loss.backward()
        except Exception as e:  # noqa: BLE001 - what it raised is the observation
            # A subclass of RuntimeError is one (read from the class's own MRO, not isinstance, which a class can
            # answer as it likes); its message is kept, bounded, as text.
            obs[RAISED] = A_RUNTIME_ERROR if RuntimeError in type.__getattribute__(type(e), "__mro__") else \
                type(e).__name__
            obs[MESSAGE] = str(BaseException.__str__(e))[:MESSAGE_BOUND]
        else:
            obs[RAISED] = NOTHING

    return run


DISHONEST_WRITES = (RAISED, MESSAGE)


def _double_use(ns, inputs, device, obs):
    """A tensor saved three times (twice by one multiplication), a graph run backward twice, then the tensor
    changed and backward run a third time."""
    p = _leaves(inputs)
    watch = _HookCounter(ns, p)
    x = p["x"]
    with watch.hooks():
        a = x * 1
        loss = ((a * a + a.sin()) * p["grad_output"]).sum()
    watch.observe_packs(obs)
    loss.backward(retain_graph=True)
    watch.observe_unpacks(obs)  # the first pass: what a single use would see
    loss.backward(retain_graph=True)
    obs[GRAD.key("x")] = x.grad.clone()  # the third pass below would add to x.grad, were it not caught
    a.add_(1)
    try:
        loss.backward()
    except RuntimeError:
        obs[CAUGHT_AFTER_REUSE] = True
    else:
        obs[CAUGHT_AFTER_REUSE] = False


DOUBLE_USE_WRITES = (GRAD, CAUGHT_AFTER_REUSE, *WATCHED)


# --- checks ---------------------------------------------------------------------------------------------------

HONEST_HINT = ("An honest program changes nothing after it was saved. In-place changes made before a tensor is "
               "saved are allowed (it is then saved at a version above 0), and one tensor may be saved several "
               "times: raise only when the version a saved tensor is at in unpack_hook differs from the one it "
               "was at in pack_hook.")


UNPACKED_HINT = ("Where such an error comes from PyTorch rather than from your hooks, look at what unpack_hook "
                 "gives back: the saved tensor's shape, dtype and device, and its values.")


def _honest_gradients(scenarios: tuple[str, ...]) -> Rule:
    """The honest programs run under the hooks and their gradients match the reference's."""
    gradients = checks.matches_reference((GRAD,), "Gradient", scenarios)

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            error = pair.got.error
            if error is not None:
                hint = ("" if error.not_attempted else
                        "\n" + exercise_text(HONEST_HINT if _SAYS_IN_PLACE.search(error.message) else UNPACKED_HINT))
                return failed(exercise_say("In {trial}, an honest program failed under your hooks. {explanation}{hint}",
                                           trial=pair.label, explanation=ev.explain(error), hint=hint),
                              "An honest program (it changes nothing after it was saved) failed under your hooks",
                              trial=pair.trial, error=error)
        return gradients(ev)

    return Rule(evaluate, scenarios, (GRAD,))


def _catches(scenarios: tuple[str, ...]) -> Rule:
    """In every dishonest program, backward raises a RuntimeError (or a subclass of one)."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            got, change = pair.got.values, CHANGES[pair.trial.scenario]
            if RAISED not in got:
                found = checks.missing(ev, pair, RAISED, "the outcome of backward")
                return replace(found, message=exercise_say("{message} (the program: {change})", message=found.message,
                                                           change=change),
                               hidden=exercise_say("In the program where {change}: {hidden}", change=change,
                                                   hidden=found.hidden))
            if got[RAISED] == NOTHING:
                return failed(
                    exercise_say("In {trial}: {change}, and backward ran without an error under your hooks. PyTorch "
                                 "skips its own version check when saved-tensor hooks are installed: unpack_hook must "
                                 "compare the version of the saved tensor now with its version when pack_hook ran, "
                                 "and raise a RuntimeError when they differ. The changed tensor may be gone by the "
                                 "time backward runs: keep something that still reads its version counter then "
                                 "(`tensor.detach()` shares it).", trial=pair.label, change=change),
                    exercise_say("{change}, and backward ran without an error under your hooks", change=change))
            if got[RAISED] != A_RUNTIME_ERROR:
                return failed(exercise_say("In {trial}: {change}; backward raised {raised}, not a RuntimeError. "
                                           "Raise a RuntimeError (or a subclass of one), as PyTorch does (an `assert` "
                                           "raises AssertionError, and disappears under `python -O`).",
                                           trial=pair.label, change=change, raised=got[RAISED]),
                              exercise_say("{change}; backward raised an exception that is not a RuntimeError",
                                           change=change))
        return PASS

    return Rule(evaluate, scenarios, (RAISED,))


def _says_versions(scenarios: tuple[str, ...]) -> Rule:
    """In every dishonest program, the RuntimeError says the two versions in PyTorch's words, and they are right."""

    def evaluate(ev: Evidence) -> Verdict:
        for pair in ev.pairs():
            got, change = pair.got.values, CHANGES[pair.trial.scenario]
            if got.get(RAISED) != A_RUNTIME_ERROR:
                said = "backward raised no RuntimeError, so it said no versions (see the check `catches in-place`)"
                return failed(exercise_say("In {trial}: {change}; {said}.", trial=pair.label, change=change, said=said),
                              exercise_say("{change}; {said}", change=change, said=said))
            message = got.get(MESSAGE)
            if not isinstance(message, str):
                return checks.missing(ev, pair, MESSAGE, "The error's message")
            found, expected = expected_versions(pair.trial.scenario, pair.inputs)
            versions = VERSIONS.search(message)
            if versions is None:
                text = ("the RuntimeError does not say the versions in PyTorch's words: write "
                        "`is at version N; expected version M`, N the version now and M the one at pack time")
                return failed(exercise_say("In {trial}: {change}; {said}.", trial=pair.label, change=change, said=text),
                              exercise_say("{change}; {said}", change=change, said=text))
            if (int(versions[1]), int(versions[2])) != (found, expected):
                text = ("the RuntimeError names other versions than the tensor's: N is the version the tensor is "
                        "at when unpack_hook runs, M the one it was at when pack_hook ran (above 0 where it was "
                        "changed before it was saved)")
                return failed(exercise_say("In {trial}: {change}; it said version {said_found}, expected "
                                           "{said_expected}, but the tensor is at version {found}, saved at "
                                           "{expected}: {text}.", trial=pair.label, change=change,
                                           said_found=versions[1], said_expected=versions[2], found=found,
                                           expected=expected, text=text),
                              exercise_say("{change}; {said}", change=change, said=text))
        return PASS

    return Rule(evaluate, scenarios, (RAISED, MESSAGE))


PUBLIC_MLP, FROZEN, VIEWS = "mlp", "frozen input, in place before saving", "chain of views"
OUTPUT, VIEW_OF_OUTPUT, INPUT, BASE, TWICE = tuple(CHANGES)
DOUBLE = "double use"
HONEST_PROGRAMS: dict[str, Program] = {PUBLIC_MLP: _mlp, FROZEN: _in_place_before_saving, VIEWS: _views}
DISHONEST_PROGRAMS: dict[str, Program] = {
    OUTPUT: _output_changed, VIEW_OF_OUTPUT: _view_of_output_changed, INPUT: _input_changed,
    BASE: _base_of_saved_view_changed, TWICE: _saved_twice_then_changed,
}
HONEST, DISHONEST = tuple(HONEST_PROGRAMS), tuple(DISHONEST_PROGRAMS)
WATCHING = (*HONEST, DOUBLE)
HONEST_GRADIENTS = _honest_gradients(HONEST)
CATCHES = _catches(DISHONEST)
NEEDS = ("honest programs must first get their gradients under your hooks, and dishonest ones be caught (the "
         "checks `honest gradients` and `catches in-place`)")

EXERCISE = Exercise(
    id="saved_hooks",
    number=10,
    title="Saved-tensor hooks that keep the check",
    defines=(Symbol("pack_hook", "function", ("tensor",)), Symbol("unpack_hook", "function", ("packed",))),
    failure=ExpectedError("RuntimeError", INPLACE_ERROR),
    scenarios=(
        *(Scenario(name, draw, _honest(HONEST_PROGRAMS[name]), HONEST_WRITES, public=name == PUBLIC_MLP)
          for name, draw in ((PUBLIC_MLP, _mlp_drawer(3, 4, 5, 2)),
                             (FROZEN, _mlp_drawer(6, 5, 7, 3, x_requires_grad=False)),
                             (VIEWS, _views_drawer(3, 8)))),
        *(Scenario(name, draw, _dishonest(DISHONEST_PROGRAMS[name]), DISHONEST_WRITES,
                   public=name in (OUTPUT, VIEW_OF_OUTPUT))
          for name, draw in ((OUTPUT, _layer_drawer(3, 4, 5)),
                             (VIEW_OF_OUTPUT, _layer_drawer(3, 4, 5)),
                             (INPUT, _layer_drawer(4, 6, 3, x_requires_grad=False)),
                             (BASE, _layer_drawer(4, 6, 6)),
                             (TWICE, _layer_drawer(5, 4, 6)))),
        Scenario(DOUBLE, _pair_drawer(4, 6), _double_use, DOUBLE_USE_WRITES, public=True),
    ),
    checks=checks.gate_checks(
        checks.all_of(HONEST_GRADIENTS, CATCHES), NEEDS,
        Check("honest gradients", 3, "Programs that change nothing after saving it (in-place changes before "
              "saving, views, an MLP) give the reference's gradients under your hooks, in float32 and float64.",
              HONEST_GRADIENTS, public=True),
        Check("catches in-place", 3, "Programs that change a saved tensor in place after it was saved (an output, "
              "an input, through a view, the base of a saved view; the changed tensor kept or dropped before "
              "backward) make backward raise a RuntimeError, or a subclass of one.", CATCHES, public=True),
        Check("says the versions", 1, "That RuntimeError says the two versions as PyTorch's message does, `is at "
              "version N; expected version M`, and they are the saved tensor's.", _says_versions(DISHONEST),
              public=True),
        Check("no history", 1, "pack_hook is called for every tensor autograd saves, and what it returns holds no "
              "tensor that requires grad (a saved output kept with its history makes a reference cycle).",
              checks.all_of(
                  checks.matches_reference((PACK_CALLS, UNPACK_CALLS), "Hook calls", WATCHING),
                  checks.holds(NO_HISTORY, WATCHING, "pack_hook returned a tensor that requires grad: keep "
                               "`tensor.detach()` (the same data and version counter, no history)"),
              ), public=True),
        Check("round trip", 1, "unpack_hook gives back a tensor with the saved tensor's shape, dtype and device, "
              "and exactly its values.",
              checks.all_of(
                  checks.holds(SAME_KIND, WATCHING, "unpack_hook returned a tensor of another shape, dtype or "
                               "device than the saved tensor's: restore them (e.g. `copy.to(device)`)"),
                  checks.holds(SAME_VALUES, WATCHING, "unpack_hook returned other values than the saved tensor "
                               "held: give back the tensor itself (a copy in a lower precision changes the "
                               "gradients)"),
              ), public=True),
        Check("double use", 1, "A tensor saved three times, in a graph run backward twice (retain_graph=True), "
              "gets the reference's gradient; changing it afterwards still makes the third backward raise.",
              checks.all_of(
                  checks.matches_reference((GRAD,), "Gradient after two backward passes", (DOUBLE,)),
                  checks.holds(CAUGHT_AFTER_REUSE, (DOUBLE,), "After two backward passes, `a.add_(1)` changed a "
                               "saved tensor and the third backward did not raise a RuntimeError"),
              ), public=True),
    ),
)

CONTRACT = contract.Contract("pack_hook", (
    contract.Dimension(contract.LAYOUT, ("contiguous", "not contiguous"), "any tensor autograd saves, views too"),
    contract.Dimension(contract.DTYPE, ("float32", "float64"), "float32 and float64"),
    contract.Dimension(contract.CALLS, ("several",), "every tensor a graph saves"),
))
"""The situations the notebook lets `pack_hook` meet (tests/test_contracts_spanned.py measures them)."""
