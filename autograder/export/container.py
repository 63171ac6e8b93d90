"""Grading inside a platform's container: one student's files against the exercises a bundle covers.

Gradescope and PrairieLearn both start a fresh container per submission with the student's files in a
folder, and both start the grader as root. This module finds which file is which exercise and grades each
with the batch grader's `grade_file`, so a bundle scores exactly as `autograder grade` does.

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
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from ..batch import Settings, exercise_from_name, find_submissions, grade_file, malformed
from ..exercises import EXERCISES
from ..files import json_text, write_atomically
from ..result import Result, Status
from ..runner import Job, Runner
from ..runner.limits import Limits
from ..runner.pool import WarmPool
from ..submission import SubmissionError, answer_code
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
    salt: str = Settings.salt
    hidden_visibility: str = "after_due_date"  # Gradescope's visibility for the course's hidden checks
    memory_mb: int = DEFAULT_MEMORY_MB  # the worker's Limits.memory, per submission

    def __post_init__(self) -> None:
        unknown = [e for e in self.exercises if e not in EXERCISES]
        if not self.exercises or unknown:
            raise ExportError(f"unknown exercise(s) {unknown or '(none given)'}; known: {', '.join(EXERCISES)}")
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
                   salt=str(data.get("salt", Settings.salt)),
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
    """One warm worker (use it with `with`), with the bundle's limits. The platform's container is the outer
    sandbox (one submission, thrown away afterwards); inside it, bubblewrap where it runs, else the
    unprivileged user. The worker starts while the grader reads the files and makes the references
    (wait=False): the first job waits for it; a submission with nothing to run never waits. The pool's
    warning, if any, goes to stderr: the platforms show it to staff only."""
    pool = WarmPool(1, Limits(timeout=config.timeout, memory=config.memory_mb * 1024**2), wait=False,
                    run_as=submission_user())
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


def declared_exercise(path: Path) -> str | None:
    """The exercise a file says it is: notebook metadata first, then its name; None if neither says."""
    try:
        declared = answer_code(path).exercise
    except (SubmissionError, OSError):
        declared = None
    return declared or exercise_from_name(path)


def notebook_name(exercise_id: str) -> str:
    return f"{EXERCISES[exercise_id].number:02d}_{exercise_id}.ipynb"


def not_submitted(exercise_id: str, found: list[Path]) -> Result:
    names = ", ".join(p.name for p in found) or "no .ipynb or .py file"
    return Result(exercise=exercise_id, submission="", status=Status.NOT_ATTEMPTED, score=0.0,
                  max_score=EXERCISES[exercise_id].max_score,
                  output=f"No file for exercise {exercise_id} was found among what you submitted ({names}). "
                         f"Submit {notebook_name(exercise_id)}, the exercise notebook with your answer.")


@dataclass(frozen=True)
class Matched:
    """Which submitted file is which exercise of the bundle (each exercise's first file is graded)."""

    files: list[Path]
    declared: dict[Path, str | None]
    per_exercise: dict[str, list[Path]]
    unmatched: list[Path] = field(default_factory=list)  # files that are none of the bundle's exercises


def match_files(folder: Path, config: BundleConfig) -> Matched:
    """Each file to the exercise it declares (metadata, then name); a lone file of a one-exercise bundle is
    that exercise whatever it says (grade_folder then tells a wrong notebook from a right one)."""
    files = find_submissions([folder]) if folder.is_dir() else []
    declared = {path: declared_exercise(path) for path in files}
    per_exercise = {e: [p for p in files if declared[p] == e] for e in config.exercises}
    if len(config.exercises) == 1 and len(files) == 1 and not per_exercise[config.exercises[0]]:
        per_exercise[config.exercises[0]] = files  # one file for a one-exercise assignment: it is that exercise
    taken = {p for paths in per_exercise.values() for p in paths}
    return Matched(files, declared, per_exercise, [p for p in files if p not in taken])


def unmatched_note(folder: Path, matched: Matched, config: BundleConfig) -> str:
    """A line for the student naming the files that were graded as nothing, and the files expected; ""
    when every file was one of the bundle's exercises."""
    if not matched.unmatched:
        return ""
    why = []
    for path in matched.unmatched:
        other = matched.declared.get(path)
        name = path.relative_to(folder).as_posix()
        why.append(f"{name} (the notebook of exercise {other}, which this assignment does not grade)"
                   if other in EXERCISES else f"{name} (it is none of this assignment's exercises)")
    expected = ", ".join(notebook_name(e) for e in config.exercises)
    return (f"Not graded: {'; '.join(why)}. This assignment grades {expected}: submit those files, named so and "
            "made from the exercise notebooks (their metadata says which exercise each one is).")


def grade_folder(folder: Path, config: BundleConfig, runner: Runner, matched: Matched | None = None) -> list[Result]:
    """One Result per exercise of the bundle, in the bundle's order, whatever the folder holds."""
    matched = matched or match_files(folder, config)
    results = []
    for exercise_id in config.exercises:
        mine = matched.per_exercise[exercise_id]
        if not mine:
            results.append(not_submitted(exercise_id, matched.files))
            continue
        path = mine[0]
        name = path.relative_to(folder).as_posix()
        other = matched.declared[path]
        if other is not None and other != exercise_id and other in EXERCISES:
            results.append(malformed(name, exercise_id, f"{path.name} is the notebook of exercise {other}, but this "
                                     f"assignment grades {exercise_id}: submit {notebook_name(exercise_id)}.",
                                     EXERCISES[exercise_id].max_score))
            continue
        result = grade_file(path, name, config.settings(exercise_id), runner)
        if len(mine) > 1:  # say which copy counted, so a student who uploaded two is not left guessing
            others = ", ".join(p.relative_to(folder).as_posix() for p in mine[1:])
            result = replace(result, output=f"{result.output} (Graded {name}; not graded: {others}.)")
        results.append(result)
    return results


class _Unavailable:
    """Stands in for a worker pool that would not start: each exercise that needed it is the grader's error
    (grade_file turns the exception into `grader_error`); missing or unreadable files are still reported."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def run(self, job: Job):
        raise RuntimeError(f"the grader's worker could not start: {self.error}")


def grade_submission(folder: Path, config: BundleConfig, matched: Matched | None = None,
                     runner_factory: Callable[[BundleConfig], Any] = make_runner) -> list[Result]:
    """grade_folder with the bundle's own runner (`runner_factory(config)`, a context manager: each platform
    module passes its own `make_runner`, which tests replace). Never raises: whatever fails is a
    `grader_error` Result for the exercises it touched, so that a platform always gets results for every
    exercise."""
    try:
        import torch

        torch.set_num_threads(1)  # the reference's tensors are tiny
    except Exception:  # noqa: BLE001 - grading reports the failed import per exercise, as grader errors
        pass
    with ExitStack() as stack:
        try:
            runner: Runner = stack.enter_context(runner_factory(config))
        except Exception as e:  # noqa: BLE001 - the grader's fault, reported per exercise
            traceback.print_exc()
            runner = _Unavailable(e)
        return grade_folder(folder, config, runner, matched)


def report_grader_errors(results: list[Result]) -> None:
    """Prints each grader error with its traceback on stdout, which both platforms show to staff only."""
    for r in results:
        if r.status == Status.GRADER_ERROR:
            print(f"GRADER ERROR on exercise {r.exercise} ({r.submission or 'no file'}): {r.output}")
            print(r.extra.get("grader_traceback", ""))
