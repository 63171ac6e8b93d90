"""A warm interpreter for `--fix`'s runs (runs.py): torch is imported once, and each run is a fork of it.

A fresh Python that imports torch costs seconds, and `--fix` runs the program three to a dozen times. The warm
interpreter (`python -m autograder.blame.fix.warm`, started once per `--fix`, in a session of its own) imports
torch and gradients.py, checks that it has no thread but its own (a fork copies one thread only), and then,
for each run it is asked for, forks: the child takes the run's working folder, environment, standard input
(/dev/null) and output file, closes every other descriptor it inherited, becomes the leader of a session of
its own (a process group, as a fresh process started with `start_new_session` is), and runs gradients.py's
main as `python -m autograder.blame.fix.gradients` would. The child starts from the interpreter as it was
after the imports: nothing of one run reaches the next.

The wire is one JSON object per line, on the interpreter's standard input and output:

    parent: {"arguments": [...], "folder": ..., "environment": {...}, "output": ...}
    warm:   {"pid": N}              the child, already the leader of its process group
    warm:   {"status": S}           it exited (a negative S: killed by signal -S); it is not reaped yet
    parent: {"reap": true}          after the parent stopped what the run left in its group
    warm:   {"reaped": true}        it is gone; anything else here, or between runs, is out of step

The child stays a zombie until the parent says so, so its process id (the id of its group) is never given to
another process while the parent may still signal the group, and a pid the wire names is signalled only if it
is the interpreter's child leading its own group. A run cannot reach the wire's descriptors (it closes them),
but a process it starts can write on the interpreter's (/proc/PID/fd/1): what it forges may be that run's own
verdict, and the wire, found out of step at the next answer, is given up with its interpreter. Where the
interpreter cannot start, is not alone in its process, stops answering (within ANSWER_TIMEOUT or
REAP_TIMEOUT), or MAX_LOST were lost, `--fix` starts each run as a fresh process, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

from .transaction import signals_held

READY_TIMEOUT = 120.0
"""Seconds the first run waits for the interpreter to import torch before it starts cold instead."""

ANSWER_TIMEOUT = REAP_TIMEOUT = 10.0
"""Seconds the interpreter has to name a run it forked, and to say that a stopped run has exited."""

MAX_LOST = 3
"""Interpreters one process may lose (killed, stopped, out of step): after that, its runs start cold."""

ALONE_ENVIRONMENT = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Set for the interpreter only (never for a run): torch's import starts no thread pool, so a fork copies all."""


class Lost(Exception):
    """The interpreter stopped answering (it died, or said something that is not the wire's): never said to
    anyone, the run starts cold."""


class _Lines:
    """Lines read from a descriptor, never more than `limit` bytes waiting."""

    def __init__(self, fd: int, limit: int = 1 << 20) -> None:
        self.fd, self.limit, self.buffer = fd, limit, b""

    def ready(self, timeout: float | None) -> bool:
        """Whether a whole line is there, waiting up to `timeout` (interruptible: a signal ends the wait). Lost
        when the interpreter closed its output."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self.fd], [], [], left)
            if not readable:
                return False
            chunk = os.read(self.fd, 65536)
            if not chunk or len(self.buffer) + len(chunk) > self.limit:
                raise Lost
            self.buffer += chunk
        return True

    def read(self, timeout: float | None) -> dict[str, Any] | None:
        """The next object, or None when the time ran out."""
        if not self.ready(timeout):
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            said = json.loads(line)
        except ValueError as e:
            raise Lost from e
        if not isinstance(said, dict):
            raise Lost
        return said


def _write(fd: int, said: dict[str, Any]) -> None:
    data = (json.dumps(said) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _child_of(pid: int, parent: int) -> bool:
    """Whether `pid` is a child of `parent` and leads its own process group (/proc/PID/stat): a pid the wire
    names is signalled only then, so a forged one never reaches a process that is not the run."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read(4096)
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2:].split()  # after the command's name, which may hold spaces
    return len(fields) > 2 and fields[1] == str(parent).encode() and fields[2] == str(pid).encode()


class WarmRun:
    """One run started by the interpreter: `pid`, `wait`, and `reap`, as runs.py uses a `subprocess.Popen`."""

    def __init__(self, interpreter: Interpreter, pid: int) -> None:
        self.interpreter, self.pid = interpreter, pid
        self.status: int | None = None
        self.reaped = False

    def wait(self, timeout: float | None = None) -> int:
        """The exit status (`Popen.returncode`'s convention); `subprocess.TimeoutExpired` after `timeout`.
        The wait can be interrupted by a signal; taking the line that came cannot (it is never lost)."""
        if self.status is not None:
            return self.status
        try:
            if not self.interpreter.lines.ready(timeout):
                raise subprocess.TimeoutExpired(["warm run", str(self.pid)], timeout or 0)
            with signals_held():
                said = self.interpreter.lines.read(0)
                status = said.get("status") if said else None
                if not isinstance(status, int):
                    raise Lost
                self.status = status
        except Lost:
            self.interpreter.lost()
            self.status = -9
        return self.status

    def reap(self) -> None:
        """After the parent stopped the run's group: the child may go, and the interpreter takes the next run.
        An interpreter that does not answer within REAP_TIMEOUT (stopped, say, by the run) is given up."""
        if self.reaped:
            return
        self.reaped = True
        try:
            self.wait(REAP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.interpreter.lost()
            self.status = -9
        if self.interpreter.alive:
            try:
                _write(self.interpreter.to_it, {"reap": True})
                if self.interpreter.lines.read(REAP_TIMEOUT) != {"reaped": True}:
                    raise Lost  # anything else on the wire: it is out of step
            except (Lost, OSError):
                self.interpreter.lost()


class Interpreter:
    """The parent's end: the interpreter process, started for one environment."""

    def __init__(self, environment: dict[str, str]) -> None:
        self.environment = environment
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.blame.fix.warm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env={**environment, **ALONE_ENVIRONMENT}, cwd="/", start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.to_it = self.process.stdin.fileno()
        self.lines = _Lines(self.process.stdout.fileno())
        self.alive, self.ready, self.refused = True, False, False

    def start(self, arguments: list[str], folder: str, environment: dict[str, str],
              output: str) -> WarmRun | None:
        """Forks one run; None where the interpreter is not there to do it (the caller starts it cold). Where it
        took the run and then failed to name it, the run is reported stopped: it is never started twice."""
        try:
            if not self.ready:
                said = self.lines.read(READY_TIMEOUT)
                if not (said and said.get("ready") is True):
                    self.refused = True
                    raise Lost
                self.ready = True
            if self.lines.ready(0):
                raise Lost  # something said between runs: out of step
            _write(self.to_it, {"arguments": arguments, "folder": folder, "environment": environment,
                                "output": output})
        except (Lost, OSError):
            self.lost()
            return None
        run = WarmRun(self, 0)
        try:
            said = self.lines.read(ANSWER_TIMEOUT)
            pid = said.get("pid") if said else None
            if not (isinstance(pid, int) and pid > 0 and _child_of(pid, self.process.pid)):
                raise Lost
            run.pid = pid
        except (Lost, OSError):
            self.lost()
            run.status, run.reaped = -9, True
        return run

    def lost(self) -> None:
        global _lost
        if self.alive:
            _lost += 1
        self.alive = False
        self.close()

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            self.process.kill()
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
            self.process.stdout.close()  # type: ignore[union-attr]
        self.process.wait()


_current: Interpreter | None = None
_lost = 0


def interpreter(environment: dict[str, str]) -> Interpreter | None:
    """The interpreter for runs in `environment` (started if there is none, or the one there has another
    environment: what a fresh Python reads at start, torch's settings among it, is that of the run); None
    where forks are not safe (anything but Linux; an interpreter that was not alone), or after MAX_LOST lost
    interpreters (a script that kills the one it was forked from each time runs cold)."""
    global _current
    if not sys.platform.startswith("linux"):
        return None
    if _current is not None and _current.refused:
        return None
    if _current is not None and (_current.environment != environment or not _current.alive):
        _current.close()
        _current = None
    if _current is None:
        if _lost >= MAX_LOST:
            return None
        try:
            _current = Interpreter(environment)
        except OSError:
            return None
        atexit.register(_current.close)
    return _current


# --- the interpreter's side ------------------------------------------------------------------------------


def _alone() -> bool:
    """Whether this process has one thread (Linux: /proc; a fork would lose any other and the locks it held)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def serve() -> int:
    from . import gradients  # noqa: F401 - torch and everything a run imports of the course, once

    if not sys.flags.safe_path:
        del sys.path[0]  # this interpreter's folder; a run puts its own first, as `python -m` does
    lines = _Lines(0)
    _write(1, {"ready": _alone()})
    if not _alone():
        return 1
    while True:
        try:
            said = lines.read(None)
        except Lost:
            return 0  # the parent is gone
        assert said is not None
        led, leads = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(led)
            _child(said, leads)  # never returns
        os.close(leads)
        os.read(led, 1)  # end of file: the child leads its own session (or is gone)
        os.close(led)
        _write(1, {"pid": pid})
        status = _exited(pid)
        _write(1, {"status": status})
        try:
            lines.read(None)  # {"reap": true}, or the parent is gone
        except Lost:
            os.waitpid(pid, 0)
            return 0
        os.waitpid(pid, 0)
        _write(1, {"reaped": True})


def _exited(pid: int) -> int:
    """The child's exit status, leaving it a zombie (WNOWAIT): its id is not reused until the parent says."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    if info is None:
        return -9
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _child(said: dict[str, Any], leads: int) -> None:
    """The run: as `python -m autograder.blame.fix.gradients ARGUMENTS` started in `folder` would be. `leads` is
    closed once it leads its own session, before the interpreter names it."""
    status = 1
    try:
        os.setsid()
        os.close(leads)
        null = os.open(os.devnull, os.O_RDONLY)
        output = os.open(said["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the wire, and anything else this interpreter held
        os.chdir(said["folder"])
        os.environ.clear()
        os.environ.update(said["environment"])
        tempfile.tempdir = None  # read TMPDIR anew
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        if not sys.flags.safe_path:
            sys.path.insert(0, os.getcwd())
        sys.argv = ["-m", *said["arguments"]]
        sys.orig_argv = [sys.executable, "-m", "autograder.blame.fix.gradients", *said["arguments"]]
        from .gradients import main

        status = main(list(said["arguments"]))
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - said in the run's output, as an uncaught error would be
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            threading._shutdown()  # type: ignore[attr-defined]  # what `python` does at exit: its threads first,
            atexit._run_exitfuncs()  # then its exit functions
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


if __name__ == "__main__":
    sys.exit(serve())
