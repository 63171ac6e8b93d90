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

The child stays a zombie until the parent says so, so its process id (the id of its group) is never given to
another process while the parent may still signal the group. Where the interpreter cannot start, is not
alone in its process, or stops answering, `--fix` starts each run as a fresh process, as before.
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
import traceback
from typing import Any

READY_TIMEOUT = 300.0
"""Seconds the first run waits for the interpreter to import torch before it starts cold instead."""

ALONE_ENVIRONMENT = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Set for the interpreter only (never for a run): torch's import starts no thread pool, so a fork copies all."""


class Lost(Exception):
    """The interpreter stopped answering (it died, or said something that is not the wire's): never said to
    anyone, the run starts cold."""


class _Lines:
    """Lines read from a descriptor, each within a time limit, never more than `limit` bytes."""

    def __init__(self, fd: int, limit: int = 1 << 20) -> None:
        self.fd, self.limit, self.buffer = fd, limit, b""

    def read(self, timeout: float | None) -> dict[str, Any] | None:
        """The next object, or None when the time ran out. Lost when the interpreter closed its output."""
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk or len(self.buffer) + len(chunk) > self.limit:
                raise Lost
            self.buffer += chunk
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


class WarmRun:
    """One run started by the interpreter: `pid`, `wait`, and `reap`, as runs.py uses a `subprocess.Popen`."""

    def __init__(self, interpreter: Interpreter, pid: int) -> None:
        self.interpreter, self.pid = interpreter, pid
        self.status: int | None = None
        self.reaped = False

    def wait(self, timeout: float | None = None) -> int:
        """The exit status (`Popen.returncode`'s convention); `subprocess.TimeoutExpired` after `timeout`."""
        if self.status is None:
            try:
                said = self.interpreter.lines.read(timeout)
            except Lost:
                self.interpreter.lost()
                self.status = -9
                return self.status
            if said is None:
                raise subprocess.TimeoutExpired(["warm run", str(self.pid)], timeout or 0)
            status = said.get("status")
            if not isinstance(status, int):
                self.interpreter.lost()
                status = -9
            self.status = status
        return self.status

    def reap(self) -> None:
        """After the parent stopped the run's group: the child may go, and the interpreter takes the next run."""
        if self.reaped:
            return
        self.reaped = True
        self.wait()
        if self.interpreter.alive:
            try:
                _write(self.interpreter.to_it, {"reap": True})
            except OSError:
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
        self.alive, self.ready = True, False

    def start(self, arguments: list[str], folder: str, environment: dict[str, str], output: str) -> WarmRun | None:
        """Forks one run; None where the interpreter is not there to do it (the caller starts it cold)."""
        try:
            if not self.ready:
                said = self.lines.read(READY_TIMEOUT)
                if not (said and said.get("ready") is True):
                    raise Lost
                self.ready = True
            _write(self.to_it, {"arguments": arguments, "folder": folder, "environment": environment,
                                "output": output})
            said = self.lines.read(READY_TIMEOUT)
            pid = said.get("pid") if said else None
            if not isinstance(pid, int) or pid <= 0:
                raise Lost
        except (Lost, OSError):
            self.lost()
            return None
        return WarmRun(self, pid)

    def lost(self) -> None:
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


def interpreter(environment: dict[str, str]) -> Interpreter | None:
    """The interpreter for runs in `environment` (started if there is none, or the one there has another
    environment: what a fresh Python reads at start, torch's settings among it, is that of the run); None
    where forks are not safe (anything but Linux)."""
    global _current
    if not sys.platform.startswith("linux"):
        return None
    if _current is not None and (_current.environment != environment or not _current.alive):
        _current.close()
        _current = None
    if _current is None:
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
        pid = os.fork()
        if pid == 0:
            _child(said)  # never returns
        _write(1, {"pid": pid})
        status = _exited(pid)
        _write(1, {"status": status})
        try:
            lines.read(None)  # {"reap": true}, or the parent is gone
        except Lost:
            os.waitpid(pid, 0)
            return 0
        os.waitpid(pid, 0)


def _exited(pid: int) -> int:
    """The child's exit status, leaving it a zombie (WNOWAIT): its id is not reused until the parent says."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    if info is None:
        return -9
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _child(said: dict[str, Any]) -> None:
    """The run: as `python -m autograder.blame.fix.gradients ARGUMENTS` started in `folder` would be."""
    status = 1
    try:
        os.setsid()
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
        sys.path.insert(0, os.getcwd())
        sys.argv = ["-m", *said["arguments"]]
        from .gradients import main

        status = main(list(said["arguments"]))
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - said in the run's output, as an uncaught error would be
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()  # what `python` does at exit
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


if __name__ == "__main__":
    sys.exit(serve())
