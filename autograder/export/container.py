"""A platform's grader, starting: its configuration, its files locked away, its worker launched.

Gradescope and PrairieLearn both start a fresh container per submission with the student's files in a
folder, and both start the grader as root. This module is what the grader needs before it imports torch:
the bundle's configuration (BundleConfig), `lock_down`, and the worker, launched first (`started_runner`)
so that its import of torch and the grader's own share the cores instead of queueing. Grading the folder
(student_folder.py) comes after, with the batch grader's `grade_file`, so a bundle scores exactly as
`autograder grade` does. Nothing here imports torch; tests/test_export.py holds both platforms to it.

Student code never runs as root. The warm worker runs in bubblewrap where it can (the bundle installs it);
where it cannot (a container may forbid the namespaces it needs), the plain worker drops to STUDENT_USER,
whom the bundle creates, and `lock_down` has made the grader's folders (configuration with the term's
salt, references, the submission) root's alone and the results folder root's to write. That is what both
platforms' own advice says, and what PrairieLearn's Python grader does with its `ag` user.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..catalog import exercise_ids
from ..files import json_text, write_atomically
from ..runner import Job, Runner
from ..runner.limits import Limits
from ..runner.pool import WarmPool
from ..settings import DEFAULT_SALT, Settings
from .source import ExportError

CONFIG_NAME = "autograder_config.json"
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
STUDENT_USER = "autograder-student"
"""The unprivileged user submissions run as where bubblewrap cannot run (setup.sh and the Dockerfile make it)."""
DEFAULT_MEMORY_MB = 128
"""What a submission may allocate beyond the warm worker. The course's solutions need under 32 MB; the
grader and its worker take about GRADER_MB before any submission runs, and Gradescope's default container
has 768 MB: 128 leaves room for both and a margin."""
MIN_MEMORY_MB = 32
GRADER_MB = 550
"""The grader and its warm worker together (proportional set size, CPU build of torch), measured on the
course's solutions: what a platform's memory limit must hold besides the submission's share."""
GRADESCOPE_DEFAULT_MB = 768
"""Gradescope's default memory limit per container (its troubleshooting page); raised in Autograder Settings."""


@dataclass(frozen=True)
class BundleConfig:
    """What a bundle grades and how; written at export time, read in the container."""

    exercises: tuple[str, ...]
    timeout: float = 60.0
    salt: str = DEFAULT_SALT
    hidden_visibility: str = "after_due_date"  # Gradescope's visibility for the course's hidden checks
    memory_mb: int = DEFAULT_MEMORY_MB  # the worker's Limits.memory, per submission

    def __post_init__(self) -> None:
        known = exercise_ids()
        unknown = [e for e in self.exercises if e not in known]
        if not self.exercises or unknown:
            raise ExportError(f"unknown exercise(s) {unknown or '(none given)'}; known: {', '.join(known)}")
        if self.hidden_visibility not in GRADESCOPE_VISIBILITIES:
            raise ExportError(f"hidden visibility must be one of {', '.join(GRADESCOPE_VISIBILITIES)}")
        if self.timeout <= 0:
            raise ExportError("timeout must be positive")
        if isinstance(self.memory_mb, bool) or not isinstance(self.memory_mb, int) or self.memory_mb < MIN_MEMORY_MB:
            raise ExportError(f"memory must be a whole number of MB, at least {MIN_MEMORY_MB} (the course's "
                              f"solutions need about 20 to 30), got {self.memory_mb!r}")

    def to_json(self) -> str:
        data = asdict(self)
        data["exercises"] = list(self.exercises)
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path) -> BundleConfig:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(exercises=tuple(data["exercises"]), timeout=float(data.get("timeout", 60.0)),
                   salt=str(data.get("salt", DEFAULT_SALT)),
                   hidden_visibility=str(data.get("hidden_visibility", "after_due_date")),
                   memory_mb=data.get("memory_mb", DEFAULT_MEMORY_MB))

    def settings(self, exercise: str) -> Settings:
        return Settings(devices=("cpu",), exercise=exercise, timeout=self.timeout, salt=self.salt)


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


def write_results(path: Path, data: dict) -> None:
    """results.json, atomically, root's to write and readable by the platform (0644)."""
    write_atomically(path, json_text(data), 0o644)  # always encodes (lone surrogates)


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
        raise RuntimeError(f"the grader's worker could not start: {self.error}")


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
