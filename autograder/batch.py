"""Grading a batch: find submissions, grade each in a worker, write results as they come, resume.

Each submission's results.json is written atomically as soon as it is graded, with the hash of the
file it graded; a rerun of the same command skips every submission whose results match its file,
so a batch killed halfway finishes without regrading or doubling anything. gradebook.csv is rebuilt
from the results at the end, atomically.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from . import trials as trial_plan
from .discover import DuplicateNames, find_submissions, named_submissions, submission_name  # noqa: F401
from .exercises import EXERCISES, get
from .files import write_atomically
from .grade import grade
from .harness import run_reference
from .report import gradebook_csv
from .result import Result
from .runner import Job, Runner
from .spec import Exercise
from .submission import SubmissionError, answer_code

STDOUT_KEPT = 4000
"""Characters of a submission's printed output kept in its results.json."""


@dataclass(frozen=True)
class Settings:
    devices: tuple[str, ...] = ("cpu",)
    exercise: str | None = None  # for files whose metadata does not say
    timeout: float = 60.0
    salt: str = "inplace-course"  # mixed into every hidden seed; set a secret one per term


def file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def exercise_from_name(path: Path) -> str | None:
    """The exercise a file's name points to (`01_residual_add.ipynb`, `residual_add-ada.py`), if one."""
    named = [e for e in EXERCISES if e in path.stem]
    return named[0] if len(named) == 1 else None


def malformed(submission: str, exercise: str, message: str, max_score: float) -> Result:
    return Result(exercise=exercise, submission=submission, status="malformed", score=0.0, max_score=max_score,
                  output=message)


class References:
    """Each exercise's trials, hidden inputs and reference outcomes, made once per batch.

    Every submission of an exercise in a batch gets the same hidden inputs (seeded by the salt and the
    exercise), so the reference is computed once, in this process, which never runs student code.
    `prepare()` makes them all in the background (while the workers start, say).
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self._made: dict[str, tuple] = {}
        self._locks = {exercise_id: threading.Lock() for exercise_id in EXERCISES}

    def get(self, exercise: Exercise) -> tuple:
        with self._locks[exercise.id]:
            if exercise.id not in self._made:
                trials = trial_plan.plan(exercise, self.settings.devices, public_only=False)
                inputs = trial_plan.draw(exercise, trials, trial_plan.derive_seed(self.settings.salt, exercise.id))
                self._made[exercise.id] = (trials, inputs, run_reference(exercise, trials, inputs))
            return self._made[exercise.id]

    def prepare(self, exercise_ids: Iterable[str]) -> threading.Thread:
        """Starts making the references of these exercises in a thread; `get` waits for each as needed."""

        def make() -> None:
            for exercise_id in exercise_ids:
                try:
                    self.get(EXERCISES[exercise_id])
                except Exception:  # noqa: BLE001 - get() raises it again where a submission needs it
                    pass

        thread = threading.Thread(target=make, daemon=True)
        thread.start()
        return thread


def grade_file(path: Path, name: str, settings: Settings, runner: Runner, references: References | None = None) -> Result:
    """One submission, whatever state it is in, to a Result. Grader faults become grader_error."""
    start = time.perf_counter()
    hint = settings.exercise or exercise_from_name(path)
    try:
        answer = answer_code(path)
    except SubmissionError as e:
        return malformed(name, hint or "unknown", str(e), _max(hint))
    exercise_id = answer.exercise or hint
    if exercise_id is None:
        return malformed(name, "unknown", f"{path.name} does not say which exercise it is (no notebook metadata): "
                         "grade it with --exercise ID.", 0.0)
    if exercise_id not in EXERCISES:
        return malformed(name, exercise_id, f"{path.name} names an unknown exercise {exercise_id!r}.", 0.0)
    exercise = get(exercise_id)
    try:
        trials, inputs, reference = (references or References(settings)).get(exercise)
        report = runner.run(Job(exercise.id, answer.code, trials, inputs, settings.timeout))
        result = grade(exercise, report, reference, trials, inputs, submission=name)
    except Exception as e:  # noqa: BLE001 - reported loudly as the grader's fault, never the student's
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return Result(exercise=exercise.id, submission=name, status="grader_error", score=0.0,
                      max_score=exercise.max_score,
                      output=f"Internal grading error (not your fault; your teacher has been told): {detail}",
                      extra={"grader_traceback": traceback.format_exc()[-4000:]})
    extra = {"stdout": report.stdout[:STDOUT_KEPT]} if report.stdout else {}
    return Result(**{**result.__dict__, "execution_time": time.perf_counter() - start, "extra": extra})


def _max(exercise_id: str | None) -> float:
    return EXERCISES[exercise_id].max_score if exercise_id in EXERCISES else 0.0


def previous_result(results_path: Path, digest: str) -> dict | None:
    """The results of an earlier run of this batch, if they graded this very file."""
    try:
        data = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if data.get("submission_sha256") == digest and data.get("status") != "grader_error":
        return data
    return None


def grade_batch(
    paths: list[Path],
    out: Path,
    settings: Settings,
    runner: Runner,
    jobs: int = 1,
    on_done: Callable[[str, dict, bool], None] | None = None,
    references: References | None = None,
) -> list[dict]:
    """Grades every submission under `paths` into `out`; returns the results as written, in order."""
    files, names = named_submissions(paths)
    rows: dict[str, dict] = {}
    todo = []
    for path, name in zip(files, names):
        digest = file_hash(path)
        done = previous_result(out / name / "results.json", digest)
        if done is not None:
            rows[name] = done
            if on_done:
                on_done(name, done, True)
        else:
            todo.append((path, name, digest))

    references = references or References(settings)

    def work(path: Path, name: str, digest: str) -> tuple[str, dict]:
        result = grade_file(path, name, settings, runner, references)
        data = result.to_json()
        data["submission_sha256"] = digest
        data["submission_path"] = str(path)
        target = out / name / "results.json"
        write_atomically(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return name, data

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(work, *item) for item in todo]
        for future in as_completed(futures):
            name, data = future.result()
            rows[name] = data
            if on_done:
                on_done(name, data, False)
    ordered = [rows[n] for n in names]
    write_gradebook(out, ordered)
    return ordered


def write_gradebook(out: Path, results: list[dict]) -> None:
    write_atomically(out / "gradebook.csv", gradebook_csv(results))
