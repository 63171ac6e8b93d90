"""Grading a batch: find submissions, grade each in a worker, write results as they come, resume.

Each submission's results.json is written atomically as soon as it is graded, with the hash of the
file it graded; a rerun of the same command skips every submission whose results match its file,
so a batch killed halfway finishes without regrading or doubling anything. gradebook.csv is rebuilt
from the results at the end, atomically.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from .core.outcome import RunReport
from .core.result import Cause, Printed, Result, SubmittedFile
from .core.spec import Exercise
from .core.status import Status
from .exercises import EXERCISES, get
from .feedback.wording import say
from .intake.discover import RESULTS, Submission, place_of
from .intake.exercise_of import Malformed, exercise_of, guess
from .intake.files import csv_cell, json_text, plain_data, read_bounded, safe_text, write_atomically
from .intake.out_folder import name_submissions, remember
from .intake.submission import MAX_BYTES, Answer, SubmissionError, answer_code
from .pipeline import Prepared, judge, prepare, regrader, run
from .runner import Runner
from .settings import Settings

STDOUT_KEPT = 4000
"""Characters of a submission's printed output kept in its results.json."""
UNREADABLE = "unreadable"
"""results.json's `submission_sha256` for a file whose bytes could not be read: never taken as already graded."""


def read(path: Path) -> Answer | SubmissionError:
    """A submission read once (submission.answer_code), or why it cannot be graded."""
    try:
        return answer_code(path)
    except SubmissionError as e:
        return e


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
                self._made[exercise.id] = prepare(exercise, self.settings.devices, salt=self.settings.salt,
                                                 fixes=self.settings.fixes)
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
               preparations: Preparations | None = None, answer: Answer | SubmissionError | None = None,
               handed_in_for: str | None = None) -> Result:
    """One submission, whatever state it is in, to a Result whose `source` is the file graded. `answer`: the file
    as read already (batch.read), else it is read here, once. `handed_in_for`: the exercise of the assignment's
    folder it was found under (discover.place_of; exercise_of flags a file of another exercise). Never raises:
    a file that cannot be graded is `malformed` (with a message the student can act on), and any other
    exception, the grader's fault, is `grader_error` with its traceback kept (never a 0 for the student)."""
    start = time.perf_counter()
    hint = settings.exercise
    sha256 = None
    try:
        hint = guess(path, settings.exercise, EXERCISES, handed_in_for)
        answer = read(path) if answer is None else answer
        sha256 = answer.sha256
        result = _grade_file(answer, path, name, settings, runner, preparations, start, handed_in_for)
    except Exception as e:  # noqa: BLE001 - reported loudly as the grader's fault, never the student's
        result = grader_error(name, hint, e)
    return replace(result, source=SubmittedFile(sha256 or UNREADABLE, safe_text(str(path))))


def _grade_file(answer: Answer | SubmissionError, path: Path, name: str, settings: Settings, runner: Runner,
                preparations: Preparations | None, start: float, handed_in_for: str | None = None) -> Result:
    which = exercise_of(answer if isinstance(answer, Answer) else path, settings.exercise, EXERCISES, handed_in_for)
    if isinstance(answer, SubmissionError):
        exercise_id = which.exercise if isinstance(which, Malformed) else which
        return malformed(name, exercise_id, str(answer), _max(exercise_id))
    if isinstance(which, Malformed):
        return malformed(name, which.exercise, which.message, _max(which.exercise))
    exercise = get(which)
    try:
        prepared = (preparations or Preparations(settings)).get(exercise)
        report = run(exercise, answer.code, prepared, runner, settings.timeout)
        result = judge(exercise, prepared, report, submission=name, answer=answer.code,
                       regrade=regrader(exercise, prepared, runner, settings.timeout))
    except Exception as e:  # noqa: BLE001 - reported loudly as the grader's fault, never the student's
        return grader_error(name, exercise.id, e)
    return replace(result, execution_time=time.perf_counter() - start, printed=printed(report))


def printed(report: RunReport) -> Printed:
    """What the submission printed, for results.json. The whole of it went on while hidden trials ran too,
    so it is the teacher's alone; `stdout`, for students, is only what a runner could tell was printed before
    any hidden input reached the answer (RunReport.public_stdout; None where it cannot tell)."""
    return Printed(teacher_stdout=report.stdout[:STDOUT_KEPT] if report.stdout else None,
                   stdout=report.public_stdout[:STDOUT_KEPT] if report.public_stdout else None)


def grader_error(name: str, exercise_id: str | None, error: BaseException) -> Result:
    """The grader's own failure on one submission: its traceback kept for the teacher, no score."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()[-2000:]
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:]
    return Result(exercise=exercise_id if isinstance(exercise_id, str) else "unknown", submission=name,
                  status=Status.GRADER_ERROR, score=0.0, max_score=_max(exercise_id),
                  output=say("intake: grader error", detail=detail), grader_traceback=trace, causes=(Cause(detail),))


def _max(exercise_id: str | None) -> float:
    return EXERCISES[exercise_id].max_score if isinstance(exercise_id, str) and exercise_id in EXERCISES else 0.0


def previous_result(results_path: Path, digest: str | None, name: str | None = None) -> Result | None:
    """The result of an earlier run of this batch, if it graded this very file (same SHA-256, same name) and
    reads back as a Result (Result.from_json); None for anything else, whatever the file holds."""
    if digest is None:
        return None
    try:
        result = Result.from_json(json.loads(read_bounded(results_path, MAX_BYTES).decode("utf-8")))
    except Exception:  # noqa: BLE001 - missing, a link, not UTF-8, not JSON, nested too deep, not a Result: regrade
        return None
    if result.source is None or result.source.sha256 != digest or result.status == Status.GRADER_ERROR:
        return None
    if name is not None and result.submission != name:
        return None
    return result


def _record(out: Path, name: str, result: Result) -> Result:
    """Writes `result` as results.json, atomically; returns it as written (every string safe to encode)."""
    data = plain_data(result.to_json())
    write_atomically(out / name / "results.json", json_text(data))
    return Result.from_json(data)


def _notify(on_done: Callable[[str, Result, bool], None] | None, name: str, result: Result, reused: bool) -> None:
    if on_done is None:
        return
    try:
        on_done(name, result, reused)
    except Exception:  # noqa: BLE001 - a progress display that fails must not stop the batch
        pass


def grade_batch(
    paths: list[Path],
    out: Path,
    settings: Settings,
    runner: Runner,
    jobs: int = 1,
    on_done: Callable[[str, Result, bool], None] | None = None,
    preparations: Preparations | None = None,
    found: list[Submission] | None = None,
    regrade: bool = False,
    only_exercise: str | None = None,
    gradebook_rows: Callable[[list[Result], list[Result]], list[Result]] | None = None,
) -> list[Result]:
    """Grades every submission under `paths` into `out`; returns the results as written, in order. `found`: the
    submissions under `paths` (out_folder.name_submissions), where the caller has them already. `regrade`: grade
    again files whose results.json holds their grade already. `only_exercise`: grade only the files of that
    exercise (the others keep the results they have and are not returned). `gradebook_rows`: (every result in
    `out`, those graded now) -> the gradebook's rows (the teacher's overrides applied, say).

    gradebook.csv has a row for every result in `out`, this batch's first, then the others by name: grading a
    few files again into a graded folder replaces their rows and keeps everyone else's. A file graded again keeps
    its name (out_folder.py), so its new result replaces the old one instead of adding a second.

    Each file is read once, in the worker thread that grades it: the SHA-256 that tells a rerun it was graded
    already is of the bytes graded. Every file gets exactly one verdict: grade_file never raises, and a worker
    that does anyway (the disk is full, say) gives its file a grader_error. gradebook.csv is written at the
    end, whatever happened (with the rows graded so far, if the batch was interrupted).
    """
    rows: dict[str, Result] = {}
    submissions: list[Submission] = []
    skipped: set[str] = set()
    fresh: set[str] = set()  # graded now, not reused
    try:
        submissions = found if found is not None else name_submissions(paths, out)
        preparations = preparations or Preparations(settings)

        def work(submission: Submission) -> tuple[Result, bool]:
            answer = read(submission.path)
            if only_exercise is not None and not _of_exercise(answer, submission.path, settings, only_exercise):
                skipped.add(submission.name)
                raise _Skipped
            done = None if regrade else previous_result(out / submission.name / RESULTS, answer.sha256,
                                                        submission.name)
            if done is not None:
                return done, True
            result = grade_file(submission.path, submission.name, settings, runner, preparations, answer,
                                handed_in_for(submission))
            return _record(out, submission.name, result), False

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(work, s): s for s in submissions}
            for future in as_completed(futures):
                submission = futures[future]
                try:
                    result, reused = future.result()
                except _Skipped:
                    continue
                except Exception as e:  # noqa: BLE001 - its own verdict; the batch goes on
                    reused = False
                    hint = guess(submission.path, settings.exercise, EXERCISES, handed_in_for(submission))
                    result = replace(grader_error(submission.name, hint, e),
                                     source=SubmittedFile(UNREADABLE, safe_text(str(submission.path))))
                    try:
                        result = _record(out, submission.name, result)
                    except Exception:  # noqa: BLE001 - the disk: the gradebook row says what happened
                        result = Result.from_json(plain_data(result.to_json()))
                rows[submission.name] = result
                if not reused:
                    fresh.add(submission.name)
                _notify(on_done, submission.name, result, reused)
    finally:
        try:
            remember(out, paths, [s for s in submissions if s.name in rows])
        finally:
            now = [rows[s.name] for s in submissions if s.name in rows]
            graded_now = [rows[s.name] for s in submissions if s.name in fresh]
            every = now + others_in(out, {s.name for s in submissions if s.name in rows})
            shown = every
            try:
                if gradebook_rows is not None:
                    shown = gradebook_rows(every, graded_now)
            finally:  # where the caller's rows fail: the results as graded, and its error
                write_gradebook(out, shown)
    return [rows[s.name] for s in submissions if s.name not in skipped]


class _Skipped(Exception):
    """A file of another exercise than --only-exercise: left as it is."""


def _of_exercise(answer: Answer | SubmissionError, path: Path, settings: Settings, exercise: str) -> bool:
    which = exercise_of(answer if isinstance(answer, Answer) else path, settings.exercise, EXERCISES)
    return (which.exercise if isinstance(which, Malformed) else which) == exercise


def others_in(out: Path, names: set[str]) -> list[Result]:
    """The results in `out` other than `names`, by name: what earlier batches graded (each read as
    previous_result reads one; a folder whose results.json does not read as a Result is left out)."""
    try:
        folders = sorted(p.name for p in out.iterdir() if p.name not in names)
    except OSError:
        return []
    found = []
    for name in folders:
        try:
            data = json.loads(read_bounded(out / name / RESULTS, MAX_BYTES).decode("utf-8"))
            found.append(Result.from_json(data))
        except Exception:  # noqa: BLE001 - not a folder, missing, a link, not JSON, not a Result: no row
            continue
    return found


def handed_in_for(submission: Submission) -> str | None:
    """The exercise of the assignment's folder a submission was found under (`class/03_residual_add/...`), if
    any: what the class's layout says it was handed in for (discover.place_of)."""
    return place_of(submission.parts, EXERCISES).assignment


GRADEBOOK_FIELDS = ("submission", "exercise", "status", "score", "max_score", "execution_time", "results")


def batch_gradebook_csv(results: Iterable[Result]) -> str:
    """A batch's gradebook.csv: one row per submission graded, in the given order (reports/gradebook.py makes the
    student gradebook, a row per student, and the LMS files). Text cells go through csv_cell: a name such as
    `=HYPERLINK(...)` or `-x.py` stays text in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=GRADEBOOK_FIELDS, lineterminator="\n")
    writer.writeheader()
    for result in results:
        writer.writerow({
            "submission": csv_cell(result.submission),
            "exercise": csv_cell(result.exercise),
            "status": result.status.value,
            "score": f"{result.score:g}",
            "max_score": f"{result.max_score:g}",
            "execution_time": f"{result.execution_time:.2f}",
            "results": csv_cell(f"{result.submission}/results.json"),
        })
    return buffer.getvalue()


def write_gradebook(out: Path, results: list[Result]) -> None:
    write_atomically(out / "gradebook.csv", batch_gradebook_csv(results))
