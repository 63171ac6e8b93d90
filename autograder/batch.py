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
from pathlib import Path

from .discover import named_submissions
from .exercises import EXERCISES, get
from .files import RefusedFile, json_text, plain_data, read_bounded, safe_text, write_atomically
from .gradebook import batch_gradebook_csv
from .outcome import RunReport
from .pipeline import Prepared, judge, prepare, run
from .result import Cause, Result
from .runner import Runner
from .settings import Settings
from .spec import Exercise
from .status import Status
from .submission import MAX_BYTES, SubmissionError, answer_code

STDOUT_KEPT = 4000
"""Characters of a submission's printed output kept in its results.json."""

TEACHER_ONLY = ("teacher_stdout", "grader_traceback", "submission_path")
"""results.json fields for the teacher alone: nothing derived from them may reach a student. Everything
else reads the same whatever the salt (timings aside), and holds nothing of the hidden inputs:
`teacher_stdout` is all the submission printed, hidden trials included; `stdout`, what it printed while
loading and on public trials, appears only where the runner can tell that part apart (`public_stdout`)."""


def file_hash(path: Path) -> str | None:
    """SHA-256 of a submission's bytes, read as the grader reads it (bounded, no links, regular files only);
    None where it cannot be read: such a file is never taken as already graded."""
    try:
        return hashlib.sha256(read_bounded(path, MAX_BYTES)).hexdigest()
    except (OSError, ValueError):
        return None


def exercise_from_name(path: Path) -> str | None:
    """The exercise a file's name points to (`01_residual_add.ipynb`, `residual_add-ada.py`), if one."""
    named = [e for e in EXERCISES if e in path.stem]
    return named[0] if len(named) == 1 else None


def malformed(submission: str, exercise: str, message: str, max_score: float) -> Result:
    return Result(exercise=exercise, submission=submission, status=Status.MALFORMED, score=0.0,
                  max_score=max_score, output=message, causes=(Cause(message),))


class Preparations:
    """Each exercise's Prepared (pipeline.prepare: trials, inputs, reference outcomes) under the batch's
    settings, made once per batch: every submission of an exercise gets the same inputs, public and hidden.
    The reference runs here, in this process, which never runs student code. `make_in_background()` makes them all in
    the background (while the workers start, say).
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self._made: dict[str, Prepared] = {}
        self._locks = {exercise_id: threading.Lock() for exercise_id in EXERCISES}

    def get(self, exercise: Exercise) -> Prepared:
        with self._locks[exercise.id]:
            if exercise.id not in self._made:
                self._made[exercise.id] = prepare(exercise, self.settings.devices, salt=self.settings.salt)
            return self._made[exercise.id]

    def make_in_background(self, exercise_ids: Iterable[str]) -> threading.Thread:
        """Starts preparing these exercises (their references above all) in a thread; `get` waits for each as needed."""

        def make() -> None:
            for exercise_id in exercise_ids:
                try:
                    self.get(EXERCISES[exercise_id])
                except Exception:  # noqa: BLE001 - get() raises it again where a submission needs it
                    pass

        thread = threading.Thread(target=make, daemon=True)
        thread.start()
        return thread


def grade_file(path: Path, name: str, settings: Settings, runner: Runner,
               preparations: Preparations | None = None) -> Result:
    """One submission, whatever state it is in, to a Result. Never raises: a file that cannot be graded is
    `malformed` (with a message the student can act on), and any other exception, the grader's fault, is
    `grader_error` with its traceback kept (never a 0 for the student)."""
    start = time.perf_counter()
    hint = settings.exercise
    try:
        hint = settings.exercise or exercise_from_name(path)
        return _grade_file(path, name, settings, runner, preparations, hint, start)
    except Exception as e:  # noqa: BLE001 - reported loudly as the grader's fault, never the student's
        return grader_error(name, hint, e)


def _grade_file(path: Path, name: str, settings: Settings, runner: Runner, preparations: Preparations | None,
                hint: str | None, start: float) -> Result:
    try:
        answer = answer_code(path)
    except (SubmissionError, RefusedFile) as e:
        return malformed(name, hint or "unknown", str(e), _max(hint))
    declared = answer.exercise
    if settings.exercise is not None and declared is not None and declared != settings.exercise:
        return malformed(name, settings.exercise,
                         f"{path.name} is the notebook of exercise {_shown(declared)} (its metadata says so), but "
                         f"exercise {settings.exercise} was asked for: submit the notebook of exercise "
                         f"{settings.exercise}.", _max(settings.exercise))
    exercise_id = declared or hint
    if exercise_id is None:
        return malformed(name, "unknown", f"{path.name} does not say which exercise it is (no notebook metadata, "
                         "no exercise id in its name): grade it with --exercise ID.", 0.0)
    if exercise_id == declared and declared not in EXERCISES:
        return malformed(name, hint or "unknown", f"{path.name} names an unknown exercise {_shown(declared)} in its "
                         f"metadata (known: {', '.join(EXERCISES)}): start again from the exercise notebook.",
                         _max(hint))
    exercise = get(exercise_id)
    try:
        prepared = (preparations or Preparations(settings)).get(exercise)
        report = run(exercise, answer.code, prepared, runner, settings.timeout)
        result = judge(exercise, prepared, report, submission=name, answer=answer.code)
    except Exception as e:  # noqa: BLE001 - reported loudly as the grader's fault, never the student's
        return grader_error(name, exercise.id, e)
    return Result(**{**result.__dict__, "execution_time": time.perf_counter() - start, "extra": printed(report)})


def printed(report: RunReport) -> dict[str, str]:
    """What the submission printed, for results.json. The whole of it went on while hidden trials ran too,
    so it is the teacher's alone; `stdout`, for students, is only what a runner could tell was printed before
    any hidden input reached the answer (RunReport.public_stdout; None where it cannot tell)."""
    extra = {"teacher_stdout": report.stdout[:STDOUT_KEPT]} if report.stdout else {}
    if report.public_stdout:
        extra["stdout"] = report.public_stdout[:STDOUT_KEPT]
    return extra


def grader_error(name: str, exercise_id: str | None, error: BaseException) -> Result:
    """The grader's own failure on one submission: its traceback kept for the teacher, no score."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()[-2000:]
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]
    return Result(exercise=exercise_id if isinstance(exercise_id, str) else "unknown", submission=name,
                  status=Status.GRADER_ERROR, score=0.0, max_score=_max(exercise_id),
                  output=f"Internal grading error (not your fault; your teacher has been told): {detail}",
                  extra={"grader_traceback": trace}, causes=(Cause(detail),))


def _shown(text: str, limit: int = 60) -> str:
    """A name from a submission, quoted and cut short, for a message."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def _max(exercise_id: str | None) -> float:
    return EXERCISES[exercise_id].max_score if isinstance(exercise_id, str) and exercise_id in EXERCISES else 0.0


def previous_result(results_path: Path, digest: str | None, name: str | None = None) -> dict | None:
    """The results of an earlier run of this batch, if they graded this very file (same SHA-256, same name)
    and read back as a Result (Result.from_json); None for anything else, whatever the file holds."""
    if digest is None:
        return None
    try:
        result = Result.from_json(json.loads(read_bounded(results_path, MAX_BYTES).decode("utf-8")))
    except Exception:  # noqa: BLE001 - missing, a link, not UTF-8, not JSON, nested too deep, not a Result: regrade
        return None
    if result.extra.get("submission_sha256") != digest or result.status == Status.GRADER_ERROR:
        return None
    if name is not None and result.submission != name:
        return None
    return plain_data(result.to_json())


def _record(out: Path, path: Path, name: str, digest: str | None, result: Result) -> dict:
    """results.json's contents for `result` (every string safe to encode), written atomically."""
    data = result.to_json()
    data["submission_sha256"] = digest or "unreadable"
    data["submission_path"] = safe_text(str(path))
    data = plain_data(data)
    write_atomically(out / name / "results.json", json_text(data))
    return data


def _notify(on_done: Callable[[str, dict, bool], None] | None, name: str, data: dict, reused: bool) -> None:
    if on_done is None:
        return
    try:
        on_done(name, data, reused)
    except Exception:  # noqa: BLE001 - a progress display that fails must not stop the batch
        pass


def grade_batch(
    paths: list[Path],
    out: Path,
    settings: Settings,
    runner: Runner,
    jobs: int = 1,
    on_done: Callable[[str, dict, bool], None] | None = None,
    preparations: Preparations | None = None,
    found: tuple[list[Path], list[str]] | None = None,
) -> list[dict]:
    """Grades every submission under `paths` into `out`; returns the results as written, in order. `found`: the
    files under `paths` and their unique names (discover.named_submissions), where the caller has them already.

    Every file gets exactly one verdict: grade_file never raises, and a worker that does anyway (the disk
    is full, say) gives its file a grader_error. gradebook.csv is written at the end, whatever happened
    (with the rows graded so far, if the batch was interrupted).
    """
    rows: dict[str, dict] = {}
    names: list[str] = []
    try:
        files, names = found if found is not None else named_submissions(paths, exclude=[out])
        todo = []
        for path, name in zip(files, names):
            digest = file_hash(path)
            done = previous_result(out / name / "results.json", digest, name)
            if done is not None:
                rows[name] = done
                _notify(on_done, name, done, True)
            else:
                todo.append((path, name, digest))

        preparations = preparations or Preparations(settings)

        def work(path: Path, name: str, digest: str | None) -> dict:
            return _record(out, path, name, digest, grade_file(path, name, settings, runner, preparations))

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(work, *item): item for item in todo}
            for future in as_completed(futures):
                path, name, digest = futures[future]
                try:
                    data = future.result()
                except Exception as e:  # noqa: BLE001 - its own verdict; the batch goes on
                    failed = grader_error(name, settings.exercise or exercise_from_name(path), e)
                    try:
                        data = _record(out, path, name, digest, failed)
                    except Exception:  # noqa: BLE001 - the disk: the gradebook row says what happened
                        data = plain_data({**failed.to_json(), "submission_sha256": digest or "unreadable",
                                           "submission_path": safe_text(str(path))})
                rows[name] = data
                _notify(on_done, name, data, False)
    finally:
        write_gradebook(out, [rows[n] for n in names if n in rows])
    return [rows[n] for n in names]


def write_gradebook(out: Path, results: list[dict]) -> None:
    write_atomically(out / "gradebook.csv", batch_gradebook_csv(Result.from_json(r) for r in results))
