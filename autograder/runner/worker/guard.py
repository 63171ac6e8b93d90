"""Keeps the grader's machinery in a worker out of reach of the answer code, as far as one process can.

The answer runs one step at a time (loading it, then each trial), each step in a thread of its own and
through the one door into student code (call.py). The main thread holds the job's token, which proves to
the grader that a report came from here, and sends the report only after the last step has ended: code
that skips the trials and writes a report of its own cannot sign it. The token is
kept where the answer's frames do not lead; an audit hook (PEP 578) refuses the ways Python offers into
the main thread's memory (gc, other threads' frames, ctypes, /proc, tracing), and the changes Python
audits (a function's code or defaults, a class's bases) to the functions and classes of the grader,
torch and the wire. Module and class attributes are not audited by Python, so the guarded namespaces
(the grader's modules and classes, torch's main ones, the wire's) are compared after every step with the
one snapshot, taken by the template (template.py) before any job: a change is tampering, and the report says so
instead of carrying observations. Torch's global state (torch_state: mode stacks, grad mode, default dtype,
global hooks...) is compared with the snapshot's after every step too: the harness puts back, in the answer's
own thread, what a step left changed, so what still differs here is refused the same way.

What one process cannot prevent (the README says it too): code that loads native code of its own, and
code that computes the right answers itself and puts them in its observations.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from itertools import repeat
from operator import attrgetter, is_
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from ... import torch_state
from ...call import Call
from ...core.outcome import RunReport
from ...feedback.wording import say
from .. import wire
from ..fdio import frame, read_frame

if TYPE_CHECKING:
    from ...harness import Steps

GUARDED_MODULES = ("json", "json.encoder", "json.decoder", "os", "posix", "threading", "_thread", "builtins",
                   "traceback", "linecache", "math", "time", "safetensors", "safetensors.torch")
"""Besides autograder.* and torch's namespaces: modules the worker's own code relies on by name."""

FORK_RESETS = {"threading": {"_active_limbo_lock", "_shutdown_locks_lock", "_shutdown_locks", "_main_thread"}}
"""Module attributes that Python itself rebinds in a forked child (threading._after_fork): not tampering."""

DENIED_EVENTS = frozenset({
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames", "sys._current_exceptions",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.monitoring.register_callback",
    "cpython.PyInterpreterState_Clear", "cpython._PySys_ClearAuditHooks",
})
DENIED_PREFIXES = ("ctypes.",)
PROC_ALLOWED = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat")
PROTECTED_MODULES = ("autograder", "torch", "safetensors", "json", "threading", "os", "posix", "builtins")
"""Classes and functions of these modules (as loaded before the answer ran) may not be changed by answer code."""


class Refused(RuntimeError):
    """What answer code gets for reaching into the grader: a plain error, recorded like any other."""


def _hook_for(protected: frozenset) -> Callable[[str, tuple], None]:
    """The audit hook. `protected`: the classes and functions that existed before the answer ran in the
    grader's, torch's and the wire's modules (classes torch makes later, lazily, are not refused)."""

    # Rendered now, before the answer runs: what it may change later (the catalogue's dict) cannot reword them.
    denied, proc = say("run: refused event", event="{event}"), say("run: refused proc")
    change = say("run: refused change", target="{target}", attribute="{attribute}")

    def hook(event: str, args: tuple) -> None:
        if event in DENIED_EVENTS or event.startswith(DENIED_PREFIXES):
            raise Refused(denied.format(event=event))
        if event == "open":
            path = args[0]
            if isinstance(path, (str, bytes)):
                real = os.path.realpath(os.fsdecode(path))
                if (real == "/proc" or real.startswith("/proc/")) and real not in PROC_ALLOWED:
                    raise Refused(proc)
        elif event in ("object.__setattr__", "object.__delattr__"):
            target = args[0]
            if isinstance(target, (type, FunctionType)) and target in protected:
                raise Refused(change.format(target=repr(getattr(target, "__qualname__", "?")), attribute=args[1]))

    return hook


def install_hook(protected: frozenset) -> None:
    """Once per job's process, before answer code runs (an audit hook cannot be removed)."""
    sys.addaudithook(_hook_for(protected))


def protected_objects() -> frozenset:
    """Every class and function in the loaded modules of PROTECTED_MODULES, and the grader's methods."""
    import warnings

    found: set = set()
    with warnings.catch_warnings():  # some of torch's deprecated names warn when looked at
        warnings.simplefilter("ignore")
        _collect_protected(found)
    return frozenset(found)


def _collect_protected(found: set) -> None:
    for name, module in list(sys.modules.items()):
        if not isinstance(module, ModuleType) or name.split(".", 1)[0] not in PROTECTED_MODULES:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, (type, FunctionType)):
                found.add(value)
                if isinstance(value, type) and name.startswith("autograder"):
                    found.update(v for v in vars(value).values() if isinstance(v, FunctionType))


def _modules() -> tuple[dict[str, ModuleType], dict[str, object]]:
    """The grader's modules and the guarded standard ones, and torch's guarded namespaces."""
    from ...harness import guarded_namespaces

    found = {name: m for name, m in list(sys.modules.items())
             if isinstance(m, ModuleType) and (name == "autograder" or name.startswith("autograder.")
                                               or name in GUARDED_MODULES)}
    return found, guarded_namespaces()


TORCH_REBINDS = frozenset({("torch", "manual_seed")})
"""What torch itself rebinds in a guarded namespace when it imports torch._dynamo, which it does lazily, at
an optimizer's first step: `torch.manual_seed = torch._disable_dynamo(torch.manual_seed)`. A worker that did
not load dynamo before its snapshot (one that grades no exercise whose trials step an optimizer) meets that
in a job whose answer steps one. Accepted only as exactly that: torch's own wrapper, around the snapshot's
own function (`Snapshot.rebound_by_torch`)."""
DYNAMO_PATCHES: dict[tuple[str | None, str], tuple[str, str]] = {
    ("torch.nn.Module", "__init__"): ("patched_init", "init"),
    ("torch.nn.Module", "__setstate__"): ("patched_setstate", "setstate")}
"""What torch.compile's first compilation rebinds (torch/_dynamo/mutation_guard.py,
install_generation_tagging_init): nn.Module's __init__ and __setstate__, each wrapped by a function of that
file that calls the original and tags the module. Accepted only as exactly that: a function whose code is that
file's (compiled here from torch's source, never from what the job could have changed), whose globals are that
module's, closed over the snapshot's own function."""


class Snapshot:
    """Every attribute of the guarded modules and namespaces (and of the grader's own classes), by identity,
    with each function's code and defaults: what answer code may not replace.

    Kept per namespace as parallel tuples, so that `changed`, which the guard runs after every step of
    every job, compares them with C-level loops (`map`, `operator.is_`): the values by identity, and, when
    `deep` (at the end of each phase), for the Python functions among them (the only objects whose code
    can be swapped) their code and defaults. Reading `__code__` is an audit event, which runs the guard's
    hook in Python, so it is not done after every step; swapping a protected function's code is an
    audited event the hook refuses at once anyway."""

    def __init__(self) -> None:
        modules, spaces = _modules()
        self.modules = modules
        groups: dict[int, tuple[Mapping[str, Any], list]] = {}
        self.labels: dict[int, str] = {}
        for name, space in [*modules.items(), *spaces.items()]:
            # a class's is a new proxy at each call: this one is kept, and labelled
            namespace: Mapping[str, Any] = vars(space)
            self.labels[id(namespace)] = name
            resets = FORK_RESETS.get(getattr(space, "__name__", ""), set())
            for key, value in list(namespace.items()):
                if key in resets:
                    continue
                groups.setdefault(id(namespace), (namespace, []))[1].append((key, value))
                if isinstance(value, type) and value.__module__.startswith("autograder"):
                    inner = vars(value)
                    if id(inner) not in groups:  # a class imported into several modules: once is enough
                        groups[id(inner)] = (inner, list(inner.items()))
        for state in torch_state.STATES:  # a row's functions, which the harness calls in the answer's thread
            self.labels[id(vars(state))] = f"torch_state[{state.name}]"
            groups[id(vars(state))] = (vars(state), list(vars(state).items()))
        # torch's global state before any job, in the thread every job's main thread is a fork of
        self.torch_state = torch_state.capture()
        self.groups = []
        for namespace, pairs in groups.values():
            functions = tuple((k, v) for k, v in pairs if isinstance(v, FunctionType))
            self.groups.append((namespace, tuple(k for k, _ in pairs), tuple(v for _, v in pairs),
                                tuple(k for k, _ in functions), tuple(f for _, f in functions),
                                tuple(f.__code__ for _, f in functions), tuple(f.__defaults__ for _, f in functions)))
        self.protected = protected_objects()
        import torch

        self._torch_wrapper = torch._disable_dynamo(len).__code__  # wrapping imports nothing; calling would
        for name, _ in DYNAMO_PATCHES.values():  # read and compiled now, before any job (and its audit hook)
            _torch_code(_MUTATION_GUARD, name)

    def rebound_by_torch(self, label: str | None, key: str, old: object, new: object) -> bool:
        """Whether `new`, found where the snapshot had `old`, is torch's lazy rebinding (TORCH_REBINDS): a plain
        function with the code of torch._disable_dynamo's wrapper, closed over `old` (and recursive=True); or
        torch.compile's (DYNAMO_PATCHES)."""
        if (label, key) in DYNAMO_PATCHES:
            return type(new) is FunctionType and _dynamo_patch(*DYNAMO_PATCHES[(label, key)], old, new)
        if (label, key) not in TORCH_REBINDS or type(new) is not FunctionType:
            return False
        if new.__code__ is not self._torch_wrapper or new.__defaults__ is not None or new.__kwdefaults__:
            return False
        try:
            cells = {name: cell.cell_contents for name, cell in zip(new.__code__.co_freevars, new.__closure__ or ())}
        except ValueError:  # an empty cell
            return False
        return cells.keys() == {"fn", "recursive"} and cells["fn"] is old and cells["recursive"] is True

    def changed(self, deep: bool = True) -> list[str]:
        """What was replaced or deleted since the snapshot (additions are fine); `deep`: functions' code and
        defaults too."""
        missing = object()
        found = [f"sys.modules[{name!r}]" for name, module in self.modules.items()
                 if sys.modules.get(name, missing) is not module]
        for namespace, keys, values, function_keys, functions, codes, defaults in self.groups:
            same = all(map(is_, map(namespace.get, keys, repeat(missing)), values))
            if same and (not deep or (all(map(is_, map(_CODE, functions), codes))
                                      and all(map(is_, map(_DEFAULTS, functions), defaults)))):
                continue
            label = self.labels.get(id(namespace))
            found += [f"{label or getattr(value, '__qualname__', '?')}.{key}" for key, value in zip(keys, values)
                      if namespace.get(key, missing) is not value
                      and not self.rebound_by_torch(label, key, value, namespace.get(key, missing))]
            if deep:  # where a value is still the snapshot's own function, its code is the one to look at
                found += [f"{label or getattr(f, '__qualname__', '?')}.{key}"
                          for key, f, code, default in zip(function_keys, functions, codes, defaults)
                          if f.__code__ is not code or f.__defaults__ is not default]
        return sorted(set(found))


_CODE, _DEFAULTS = attrgetter("__code__"), attrgetter("__defaults__")
_MUTATION_GUARD = "torch._dynamo.mutation_guard"


def _dynamo_patch(name: str, holds: str, old: object, new: FunctionType) -> bool:
    """Whether `new` is mutation_guard.py's function `name`, as torch compiles it, closed over `old` as `holds`."""
    module = sys.modules.get(_MUTATION_GUARD)
    expected = _torch_code(_MUTATION_GUARD, name)
    if module is None or expected is None or new.__globals__ is not vars(module):
        return False
    if new.__code__ != expected or new.__code__.co_filename != expected.co_filename or new.__defaults__ is not None:
        return False
    try:
        cells = {n: c.cell_contents for n, c in zip(new.__code__.co_freevars, new.__closure__ or ())}
    except ValueError:
        return False
    return cells.keys() == {holds} and cells[holds] is old


@functools.cache
def _torch_code(module: str, name: str) -> CodeType | None:
    """The code object of function `name` (at any depth) in torch's module `module`, compiled from its source
    file in torch's installation: what torch itself runs, whatever a job did to the loaded module."""
    import torch

    path = Path(torch.__file__).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")
    try:
        todo = [compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)]
    except (OSError, SyntaxError, ValueError):
        return None
    while todo:
        code = todo.pop()
        if code.co_name == name:
            return code
        todo += [c for c in code.co_consts if isinstance(c, CodeType)]
    return None


def _into(box: list, call: Callable[..., Call], step: Callable[[object], object], sent: object) -> None:
    """An answer thread's whole work: one step, through the one door (call.py), its Call into `box`."""
    box.append(call(step, sent))


class Fds(NamedTuple):
    """The job's descriptors: the report pipe, the request pipe and the hidden inputs' pipe."""

    report: int
    request: int
    hidden: int


MAX_HIDDEN_BYTES = 512 * 1024**2
THREAD_RETRIES = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05)
"""Seconds to wait before trying again to start a step's thread, where the kernel refused one."""


class Seal:
    """The main thread's half of a job: runs the answer's steps, each in a thread of its own, compares the
    grader and torch with the snapshot after each, fetches the hidden inputs between the phases, then
    signs and sends the report.

    Everything it needs after the answer ran is bound here, before: the token, the pipes, os.read and
    os.write, os._exit, the wire's functions, and a blank report encoded in advance, so a patched module
    cannot change how it reports.
    """

    def __init__(self, token: bytes, fds: Fds, snapshot: Snapshot | None = None) -> None:
        self._token = token
        self._fds = fds
        self._read = os.read
        self._read_frame = read_frame
        self._frame = frame
        self._write = os.write
        self._sleep = time.sleep
        self._exit = os._exit
        self._encode = wire.encode_report
        self._decode_inputs = wire.decode_inputs
        self._count = threading.active_count
        self._escape = json.encoder.encode_basestring_ascii
        self._call = Call.from_call
        self._into = _into
        self._snapshot = snapshot or Snapshot()
        self._state_differing = torch_state.differing
        self._blank = wire.pack({"load_error": None, "problems": {}, "outcomes": {}}, {})
        # Rendered before the answer runs, like everything above: a patch cannot reword or break them.
        self._said = {"hidden": say("run: hidden channel used"), "no report": say("run: no report"),
                      "escaped": say("run: harness escaped"), "tampered": say("run: tampered", changed="{changed}"),
                      "threads": say("run: threads left"), "state": say("run: global state left", states="{states}")}

    def _tamper_frame(self, what: str) -> bytes:
        """A report that says only `what`, built from strings alone (nothing a patch could have reached)."""
        error = ('{"type": "TamperError", "message": ' + self._escape(what) + ', "line": null, "code": null, '
                 '"culprit": null}')
        text = ('{"load_error": ' + error + ', "problems": {}, "outcomes": {}}').encode("ascii")
        return wire.MAGIC + len(text).to_bytes(4, "little") + text + self._blank[8 + int.from_bytes(
            self._blank[4:8], "little"):]

    def _step(self, steps: Steps, sent: object) -> Call | None:
        """One step of the answer, in a thread of its own; None where not even a Call came back. The thread
        holds the box, the Call and the steps, never this Seal (its token)."""
        box: list[Call] = []
        thread = threading.Thread(target=self._into, args=(box, self._call, steps.send, sent), name="answer",
                                  daemon=True)
        for wait in THREAD_RETRIES:  # where the job may have one thread besides this one (job.JOB_TASKS), the
            try:  # last step's thread may not quite have ended when join() returns
                thread.start()
                break
            except RuntimeError:
                self._sleep(wait)
        else:
            return None
        thread.join()
        return box[0] if box else None

    def run(self, steps: Steps, hidden: bool) -> None:
        """Runs the answer's `steps` (harness.answer_steps) to their end, looking after each. With `hidden`
        (the job has trials on hidden inputs), the report of the public phase, which the steps yield, is
        encoded at once (the hidden phase could otherwise reach and rewrite it); then the hidden inputs
        are fetched and sent into the steps. Then sends the signed report, in one or two frames (or what
        tampering was seen instead), and exits."""
        threads_before = self._count()
        frames: list[bytes] = []
        sent = None
        while True:
            call = self._step(steps, sent)
            phase_ends = call is not None and (type(call.value) is RunReport or type(call.error) is StopIteration)
            problem = self._problem(call, threads_before, deep=phase_ends)
            if problem is not None:
                break
            assert call is not None  # _problem names a step that made no call
            sent = None
            if type(call.error) is StopIteration:  # the last step: its value is the report
                # Fetched even when the answer has already failed: hidden inputs that are no longer there to
                # fetch mean the answer took them itself, and whatever it printed or raised may hold them.
                if hidden and not frames and self._fetch_hidden() is None:
                    problem = self._said["hidden"]
                elif type(call.error.value) is not RunReport:
                    problem = self._said["no report"]
                else:
                    frames.append(self._encode(call.error.value))
                break
            if type(call.value) is RunReport:  # the public phase's report
                frames.append(self._encode(call.value))
                sent = self._fetch_hidden()
                if sent is None:
                    problem = self._said["hidden"]
                    break
        if problem is not None:
            frames = [self._tamper_frame(problem)]
        self.send(self._frame(frames[0]) + b"".join(frames[1:]))  # the first frame with its length, then the rest

    def _problem(self, call: Call | None, threads_before: int, deep: bool) -> str | None:
        """Why the step that made `call` cannot be trusted, or None (`deep`: the end of a phase, where the
        functions' code is compared too)."""
        changed = self._snapshot.changed(deep)
        if changed:
            shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
            return self._said["tampered"].format(changed=shown)
        left = self._state_differing(self._snapshot.torch_state)
        if left:  # the harness puts it back in the answer's thread: what this thread sees differ, it could not
            return self._said["state"].format(states=", ".join(left))
        if self._count() > threads_before:
            return self._said["threads"]
        if call is None or (call.error is not None and type(call.error) is not StopIteration):
            return self._said["escaped"]
        return None

    def _fetch_hidden(self) -> dict | None:
        """Asks the relay for the hidden inputs and reads them: None if the pipe was tampered with."""
        try:
            self._write(self._fds.request, b"H")
            inputs = self._read_frame(self._fds.hidden, MAX_HIDDEN_BYTES, self._read)
            return None if inputs is None else self._decode_inputs(inputs)
        except (OSError, wire.WireError, ValueError, KeyError):
            return None

    def send(self, frame: bytes) -> None:
        data = memoryview(self._token + frame)
        try:
            while data:
                data = data[self._write(self._fds.report, data):]
        except OSError:  # the answer closed or replaced the pipe: no report, the grader says so
            self._exit(71)
        self._exit(0)
