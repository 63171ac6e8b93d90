"""A platform's grader, starting: its configuration, its files locked away, its worker launched.

Gradescope and PrairieLearn both start a fresh container per submission with the student's files in a
folder, and both start the grader as root. This module is what the grader needs before it imports torch:
the bundle's configuration (BundleConfig), `lock_down`, and the worker, launched first (`started_runner`)
so that its import of torch and the grader's own share the cores instead of queueing. Grading the folder
(student_folder.py) comes after, with the batch grader's `grade_file`, so a bundle scores exactly as
`autograder grade` does. Nothing here imports torch; tests/test_export.py holds every platform to it.

Student code never runs as root. The warm worker runs in bubblewrap where it can (the bundle installs it);
where it cannot (a container may forbid the namespaces it needs), the plain worker drops to STUDENT_USER,
whom the bundle creates, and `lock_down` has made the grader's folders (configuration with the term's
salt, references, the submission) root's alone and the results folder root's to write. That is what both
platforms' own advice says, and what PrairieLearn's Python grader does with its `ag` user.
"""

from __future__ import annotations

import os
import pwd
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NoReturn

from ..feedback.wording import say
from ..intake.files import json_text, write_atomically
from ..runner import Job, Runner
from ..runner.limits import Limits
from ..runner.pool import WarmPool
from .config import BundleConfig

STUDENT_USER = "autograder-student"
"""The unprivileged user submissions run as where bubblewrap cannot run (setup.sh and the Dockerfile make it)."""


def submission_user() -> str | None:
    """Who a plain worker drops to: the bundle's user where the grader is root (as both platforms start it),
    else "nobody", never root; None for a grader that is not root (it can drop to no one: it runs
    submissions as itself, and the pool says so). Unused where bubblewrap runs: its worker is "nobody"."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(STUDENT_USER)
        return STUDENT_USER
    except KeyError:  # setup.sh or the Dockerfile did not run; the pool's warning names the user it runs as
        return "nobody"  # and WarmPool refuses to run unsandboxed if there is no such user either


def make_runner(config: BundleConfig) -> WarmPool:
    """One warm worker (use it with `with`), with the bundle's limits, warmed for the bundle's exercises
    only. The platform's container is the outer sandbox (one submission, thrown away afterwards); inside
    it, bubblewrap where it runs, else the unprivileged user. The worker starts while the grader imports
    torch, reads the files and makes the references (wait=False): the first job waits for it; a submission
    with nothing to run never waits. The pool's warning, if any, goes to stderr: the platforms show it to
    staff only."""
    pool = WarmPool(1, Limits(memory=config.memory_mb * 1024**2), wait=False,
                    run_as=submission_user(), exercises=config.exercises)
    if pool.warning:
        print(pool.warning, file=sys.stderr)
    return pool


def lock_down(private: Iterable[Path], shared: Iterable[Path]) -> None:
    """Before any submission runs. `private` folders (the configuration, the references, the submission)
    become root's alone (0700): the student user cannot list or read anything in them. `shared` folders
    (results) are made if missing and become root's to write, readable by all (0755): the platform reads
    them back, perhaps not as root. Ownership changes only where the grader is root."""
    is_root = os.geteuid() == 0
    for folders, mode in ((private, 0o700), (shared, 0o755)):
        for folder in folders:
            if mode == 0o755:
                folder.mkdir(parents=True, exist_ok=True)
            elif not folder.is_dir():
                continue
            if is_root:
                os.chown(folder, 0, 0)
            folder.chmod(mode)


RESERVED_BYTES = 1024 * 1024
"""The room results.json is given on disk before student code runs (a platform's results for every exercise
take tens of kB)."""


def reserve_results(path: Path, fallback: dict) -> None:
    """Before any student code runs: results.json already holds `fallback` (the platform's result for a grader
    that did not finish), padded with spaces to RESERVED_BYTES. A grader killed later leaves that result; a
    submission that fills the disk cannot take the room the real result needs (write_results rewrites these
    blocks in place when no new file can be written)."""
    text = json_text(fallback)
    write_atomically(path, text + " " * max(0, RESERVED_BYTES - len(text.encode("utf-8"))), 0o644)


def write_results(path: Path, data: dict, fallback: dict | None = None) -> None:
    """results.json, atomically, root's to write and readable by the platform (0644). Where the disk is full,
    the reserved file (reserve_results) is rewritten in place: `data`, or `fallback` if `data` does not fit."""
    text = json_text(data)  # always encodes (lone surrogates)
    try:
        write_atomically(path, text, 0o644)
        return
    except OSError:
        if fallback is None:
            raise
    encoded = text.encode("utf-8")
    if len(encoded) > RESERVED_BYTES:
        encoded = json_text(fallback).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        os.pwrite(fd, encoded, 0)
        os.ftruncate(fd, len(encoded))
        os.fsync(fd)
    finally:
        os.close(fd)


def leave(code: int) -> NoReturn:
    """Ends a platform's grader once results.json is written and the worker is gone: without tearing torch's
    modules down, which would add about a second to every submission's run for nothing."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class _Unavailable:
    """Stands in for a worker pool that would not start: each exercise that needed it is the grader's error
    (grade_file turns the exception into `grader_error`); missing or unreadable files are still reported."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def run(self, job: Job):
        raise RuntimeError(say("platforms: worker did not start", error=self.error))


@contextmanager
def started_runner(config: BundleConfig, runner_factory: Callable[[BundleConfig], Any]) -> Iterator[Runner]:
    """The bundle's runner, launched now, before the grader imports torch (`runner_factory(config)`, a context
    manager: each platform module passes its own `make_runner`, which tests replace). One that will not
    start is replaced by _Unavailable, so that the platform still gets a result for every exercise."""
    with ExitStack() as stack:
        try:
            runner: Runner = stack.enter_context(runner_factory(config))
        except Exception as e:  # noqa: BLE001 - the grader's fault, reported per exercise
            traceback.print_exc()
            runner = _Unavailable(e)
        yield runner
