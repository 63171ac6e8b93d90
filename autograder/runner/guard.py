"""Keeps the grader's machinery in a worker out of reach of the answer code, as far as one process can.

The answer (loading it and every trial) runs in a thread of its own. The main thread holds the job's
token, which proves to the grader that a report came from here, and sends the report only after that
thread has ended: code that skips the trials and writes a report of its own cannot sign it. The token is
kept where the answer's frames do not lead; an audit hook (PEP 578) refuses the ways Python offers into
the main thread's memory (gc, other threads' frames, ctypes, /proc, tracing), and refuses changes to the
functions and classes of the grader, torch and the wire. Module attributes cannot be guarded that way,
so they are compared with a snapshot taken before the answer ran: a change is tampering, and the report
says so instead of carrying observations.

What one process cannot prevent (the README says it too): code that loads native code of its own, and
code that computes the right answers itself and puts them in its observations.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from types import FunctionType, ModuleType

from ..outcome import RunReport
from . import wire

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
"""Classes and functions of these may not be changed by answer code (their __module__ starts so)."""


class Refused(RuntimeError):
    """What answer code gets for reaching into the grader: a plain error, recorded like any other."""


def _protected(obj: object) -> bool:
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        return True  # builtin types: Python refuses those changes itself anyway
    return module.split(".", 1)[0] in PROTECTED_MODULES


def _hook(event: str, args: tuple) -> None:
    if event in DENIED_EVENTS or event.startswith(DENIED_PREFIXES):
        raise Refused(f"the grader does not allow {event} in submitted code")
    if event == "open":
        path = args[0]
        if isinstance(path, (str, bytes)):
            real = os.path.realpath(os.fsdecode(path))
            if (real == "/proc" or real.startswith("/proc/")) and real not in PROC_ALLOWED:
                raise Refused("the grader does not allow reading /proc in submitted code")
    elif event in ("object.__setattr__", "object.__delattr__"):
        target = args[0]
        if isinstance(target, (type, FunctionType)) and _protected(target):
            raise Refused(f"your code tried to change {getattr(target, '__qualname__', target)!r}.{args[1]}: "
                          "changing torch or the grader is not allowed")


def install_hook() -> None:
    """Once per worker process, before answer code runs (an audit hook cannot be removed)."""
    sys.addaudithook(_hook)


def _modules() -> tuple[dict[str, ModuleType], dict[str, object]]:
    """The grader's modules and the guarded standard ones, and torch's guarded namespaces."""
    from ..harness import guarded_namespaces

    found = {name: m for name, m in list(sys.modules.items())
             if isinstance(m, ModuleType) and (name == "autograder" or name.startswith("autograder.")
                                               or name in GUARDED_MODULES)}
    return found, guarded_namespaces()


class Snapshot:
    """Every attribute of the guarded modules and namespaces (and of the grader's own classes), by identity,
    with each function's code and defaults: what answer code may not replace."""

    def __init__(self) -> None:
        modules, spaces = _modules()
        self.modules = modules
        entries = []
        for space in [*modules.values(), *spaces.values()]:
            namespace = vars(space)
            resets = FORK_RESETS.get(getattr(space, "__name__", ""), set())
            for key, value in list(namespace.items()):
                if key in resets:
                    continue
                entries.append((namespace, key, value, getattr(value, "__code__", None),
                                getattr(value, "__defaults__", None)))
                if isinstance(value, type) and value.__module__.startswith("autograder"):
                    for k, v in list(vars(value).items()):
                        entries.append((vars(value), k, v, getattr(v, "__code__", None), None))
        self.entries = entries
        self.labels = {id(vars(s)): n for n, s in [*modules.items(), *spaces.items()]}

    def changed(self) -> list[str]:
        """What was replaced or deleted since the snapshot (additions are fine)."""
        missing = object()
        found = []
        for name, module in self.modules.items():
            if sys.modules.get(name, missing) is not module:
                found.append(f"sys.modules[{name!r}]")
        for namespace, key, value, code, defaults in self.entries:
            now = namespace.get(key, missing)
            if now is not value or getattr(now, "__code__", None) is not code or (
                    defaults is not None and getattr(now, "__defaults__", None) is not defaults):
                found.append(f"{self.labels.get(id(namespace), getattr(value, '__qualname__', '?'))}.{key}")
        return sorted(set(found))


class Seal:
    """The main thread's half of a job: runs the answer in a thread, then signs and sends the report.

    Everything it needs after the answer ran is bound here, before: the token, the pipe, os.write,
    os._exit, and a tamper report encoded in advance, so a patched module cannot change how it reports.
    """

    def __init__(self, token: bytes, fd: int, snapshot: Snapshot | None = None) -> None:
        self._token = token
        self._fd = fd
        self._write = os.write
        self._exit = os._exit
        self._encode = wire.encode_report
        self._count = threading.active_count
        self._escape = json.encoder.encode_basestring_ascii
        self._snapshot = snapshot or Snapshot()
        self._blank = wire.pack({"load_error": None, "problems": {}, "outcomes": {}, "seconds": 0.0}, {})

    def _tamper_frame(self, what: str) -> bytes:
        """A report that says only `what`, built from strings alone (nothing a patch could have reached)."""
        error = ('{"type": "TamperError", "message": ' + self._escape(what) + ', "line": null, "code": null, '
                 '"culprit": null}')
        text = ('{"load_error": ' + error + ', "problems": {}, "outcomes": {}, "seconds": 0.0}').encode("ascii")
        return wire.MAGIC + len(text).to_bytes(4, "little") + text + self._blank[8 + int.from_bytes(
            self._blank[4:8], "little"):]

    def run(self, work: Callable[[], RunReport]) -> None:
        """Runs `work` (the answer and its trials) in its own thread, then sends the signed report and exits."""
        threads_before = self._count()
        box: list[object] = []

        def answer() -> None:
            try:
                box.append(work())
            except BaseException as e:  # noqa: BLE001 - reported below; nothing may escape unseen
                box.append(e)

        thread = threading.Thread(target=answer, name="answer", daemon=True)
        thread.start()
        thread.join()
        frame = self._judge(box, threads_before)
        self.send(frame)

    def _judge(self, box: list[object], threads_before: int) -> bytes:
        changed = self._snapshot.changed()
        if changed:
            shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
            return self._tamper_frame(f"your code replaced parts of the grader or of torch ({shown}); the grader "
                                      "cannot trust what it observed after that, so this counts as a failure.")
        if self._count() > threads_before:
            return self._tamper_frame("your code left threads running after it returned; the grader cannot "
                                      "trust observations that another thread may still change.")
        if len(box) != 1 or not isinstance(box[0], RunReport):
            what = type(box[0]).__name__ if len(box) == 1 else "several results"
            return self._tamper_frame(f"the run ended without a report ({what} escaped the grader's harness).")
        return self._encode(box[0])

    def send(self, frame: bytes) -> None:
        data = memoryview(self._token + frame)
        try:
            while data:
                data = data[self._write(self._fd, data):]
        except OSError:  # the answer closed or replaced the pipe: no report, the grader says so
            self._exit(71)
        self._exit(0)
