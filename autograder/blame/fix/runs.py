"""One run of the user's program for `autograder blame --fix`: gradients.py, in a process of its own and a scratch
folder.

Each run is a fork of a warm interpreter that has imported torch once (warm.py), or, where there is none, a
fresh Python (`python -m autograder.blame.fix.gradients`): the same command, folder, environment and output.

The run reads the script and the rewritten files from text handed to it (scratch.py), never from the user's
files, and its working folder is a new scratch folder that shows the user's one and keeps every write Python
makes. Its standard input is /dev/null (a script that waits for input fails at once instead of waiting for
the time limit); its output goes to a file, not a pipe, so a background child that keeps the output open
does not keep --fix waiting: once the run's own process exits, everything it started is stopped, as it is
when the time limit passes or --fix itself is stopped (the run has a process group of its own).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ...feedback.wording import say
from . import warm
from .transaction import signals_held

RUN_TIMEOUT = 600
"""Seconds for each run (`--timeout`)."""

OUTPUT_TAIL = 2000
"""Bytes of a failed run's output kept to say why."""


@dataclass(frozen=True)
class Program:
    """What a run executes: the script (its absolute path), its arguments, the texts that stand for files (the
    script as it was when --fix started, and the rewritten files), and the working folder it is shown."""

    script: str
    args: tuple[str, ...]
    folder: str
    sources: dict[str, str] = field(default_factory=dict)

    def rewritten(self, texts: dict[str, str]) -> Program:
        return Program(self.script, self.args, self.folder, {**self.sources, **texts})


def record(program: Program, mode: str, float64: bool, timeout: float = RUN_TIMEOUT,
           out_of_place: tuple[str, ...] = ()) -> dict[str, Any]:
    """Runs the program once under gradients.py and returns its recording."""
    base: Path | None = None
    child: warm.WarmRun | _Cold | None = None
    try:
        with signals_held():  # a signal lands while the run runs, never half way through starting or cleaning up
            base = Path(tempfile.mkdtemp(prefix="autograder-blame-"))
            out, log, arguments, env = _prepare(base, program, mode, float64, out_of_place)
            child = _start(arguments, base / "work", env, log)
        try:
            status: int | None = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = None
        if status is None:
            return failed(say("blame: run too long", seconds=timeout), float64)
        if not out.exists() or out.stat().st_size == 0:
            return failed(say("blame: run crashed", status=status, output=_tail(log)), float64)
        try:
            return torch.load(out, weights_only=True)
        except Exception as e:  # noqa: BLE001 - the program wrote into the file gradients.py holds open
            return failed(say("blame: recording unreadable", error=type(e).__name__), float64)
    finally:
        with signals_held():  # the run, what it left in the background, and its folders: all gone
            if child is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if child.pid > 0:  # 0 would be this process's own group: a run that was never named
                        os.killpg(child.pid, signal.SIGKILL)
                child.reap()
            if base is not None:
                shutil.rmtree(base, ignore_errors=True)


def _prepare(base: Path, program: Program, mode: str, float64: bool,
             out_of_place: tuple[str, ...]) -> tuple[Path, Path, list[str], dict[str, str]]:
    """The run's folders (its working folder, its temporary folder, the texts it runs) and its command."""
    work, scratch_tmp, texts = base / "work", base / "tmp", base / "sources"
    for folder in (work, scratch_tmp, texts):
        folder.mkdir()
    out = base / "recording.pt"
    arguments = ["--mode", mode, "--out", str(out), "--show", program.folder, *(["--float64"] if float64 else [])]
    for site in out_of_place:
        arguments += ["--out-of-place", site]
    for n, (path, text) in enumerate(sorted(program.sources.items())):
        (texts / f"{n}.py").write_text(text, encoding="utf-8")
        arguments += ["--source", f"{path}={texts / f'{n}.py'}"]
    arguments += [program.script, *program.args]
    log = base / "output.txt"
    log.touch()
    return out, log, arguments, dict(_environment(), TMPDIR=str(scratch_tmp))


_started_in: dict[str, str] | None = None
"""The environment --fix started in (warm_up): the script's first run, in --fix's own process, may change
os.environ; the later runs start, as that first one did, from the environment the user gave."""


def _environment() -> dict[str, str]:
    """Every run's environment but its TMPDIR (each run has its own)."""
    environ = os.environ if _started_in is None else _started_in
    return dict(environ, PYTHONDONTWRITEBYTECODE="1",
                PYTHONPATH=os.pathsep.join(filter(None, [_package_root(), environ.get("PYTHONPATH")])))


def _shared(environment: dict[str, str]) -> dict[str, str]:
    """What the warm interpreter is started with, and chosen by: a run's environment but the TMPDIR it has alone."""
    return {k: v for k, v in environment.items() if k != "TMPDIR"}


def warm_up() -> None:
    """Keeps the environment as it is now for every run, and starts the warm interpreter now, so that it
    imports torch while --fix does something else (the script's first run)."""
    global _started_in
    _started_in = dict(os.environ)
    warm.interpreter(_shared(_environment()))


def cool_down() -> None:
    """--fix is done: later runs (a caller's own) take the environment as it is then."""
    global _started_in
    _started_in = None


class _Cold:
    """A run started as a fresh Python."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process, self.pid = process, process.pid

    def wait(self, timeout: float | None = None) -> int:
        return self.process.wait(timeout)

    def reap(self) -> None:
        self.process.wait()


def _start(arguments: list[str], cwd: Path, env: dict[str, str], log: Path) -> warm.WarmRun | _Cold:
    """A fork of the warm interpreter; a fresh Python where there is none."""
    interpreter = warm.interpreter(_shared(env))
    run = interpreter.start(arguments, str(cwd), env, str(log)) if interpreter is not None else None
    if run is not None:
        return run
    with open(log, "wb") as output:
        return _Cold(subprocess.Popen([sys.executable, "-m", "autograder.blame.fix.gradients", *arguments], cwd=cwd,
                                      env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                      start_new_session=True))


def _tail(log: Path) -> str:
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - OUTPUT_TAIL))
        return f.read().decode("utf-8", "replace").strip()[-300:]


def failed(why: str, float64: bool) -> dict[str, Any]:
    """The recording of a run that did not finish."""
    return {"status": 1, "count": 0, "roots": [], "backwards": [], "reached": [], "steps": [], "step_counts": [],
            "shapes": [], "final": [], "float64": float64, "out_of_place_calls": None,
            "error": {"type": "RunFailed", "message": why, "inplace": False, "report": None}}


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[3])  # the folder that holds autograder/
