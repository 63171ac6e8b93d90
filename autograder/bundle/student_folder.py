"""One student's files in a platform's container, graded against the exercises its bundle covers: which
file is which exercise (notebook metadata, then the name), then each graded with the batch grader's
`grade_file`. Imported once the worker has been launched (container.started_runner): this is where torch
comes in."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..batch import grade_file, read
from ..core.result import Result
from ..core.status import Status
from ..exercises import EXERCISES
from ..feedback.wording import say
from ..intake.discover import find_submissions
from ..intake.exercise_of import exercise_of
from ..intake.submission import Answer, SubmissionError
from ..runner import Runner
from .config import BundleConfig


def notebook_name(exercise_id: str) -> str:
    return f"{EXERCISES[exercise_id].number:02d}_{exercise_id}.ipynb"


def not_submitted(exercise_id: str, found: list[Path]) -> Result:
    names = ", ".join(p.name for p in found) or say("intake: no file at all")
    return Result(exercise=exercise_id, submission="", status=Status.NOT_ATTEMPTED, score=0.0,
                  max_score=EXERCISES[exercise_id].max_score,
                  output=say("intake: not submitted", exercise=exercise_id, found=names,
                             notebook=notebook_name(exercise_id)))


@dataclass(frozen=True)
class Matched:
    """Which submitted file is which exercise of the bundle (each exercise's first file is graded)."""

    files: list[Path]
    declared: dict[Path, str | None]
    per_exercise: dict[str, list[Path]]
    unmatched: list[Path] = field(default_factory=list)  # files that are none of the bundle's exercises
    answers: dict[Path, Answer | SubmissionError] = field(default_factory=dict)  # each file as read, once


def match_files(folder: Path, config: BundleConfig) -> Matched:
    """Each file to the exercise it declares (exercise_of, nothing asked: metadata, then name); a lone file of a
    one-exercise bundle is that exercise whatever it says (grading it then tells a wrong notebook from a right
    one). Each file is read here, once, and graded as read."""
    files = find_submissions([folder]) if folder.is_dir() else []
    answers = {path: read(path) for path in files}
    declared = {path: _declared(path, answers[path]) for path in files}
    per_exercise = {e: [p for p in files if declared[p] == e] for e in config.exercises}
    if len(config.exercises) == 1 and len(files) == 1 and not per_exercise[config.exercises[0]]:
        per_exercise[config.exercises[0]] = files  # one file for a one-exercise assignment: it is that exercise
    taken = {p for paths in per_exercise.values() for p in paths}
    return Matched(files, declared, per_exercise, [p for p in files if p not in taken], answers)


def _declared(path: Path, answer: Answer | SubmissionError) -> str | None:
    which = exercise_of(answer if isinstance(answer, Answer) else path, None, EXERCISES)
    return which if isinstance(which, str) else None


def unmatched_note(folder: Path, matched: Matched, config: BundleConfig) -> str:
    """A line for the student naming the files that were graded as nothing, and the files expected; ""
    when every file was one of the bundle's exercises."""
    if not matched.unmatched:
        return ""
    why = []
    for path in matched.unmatched:
        other = matched.declared.get(path)
        name = path.relative_to(folder).as_posix()
        why.append(say("intake: another exercise's file", file=name, exercise=other) if other in EXERCISES
                   else say("intake: no exercise's file", file=name))
    expected = ", ".join(notebook_name(e) for e in config.exercises)
    return say("intake: not graded", files="; ".join(why), expected=expected)


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
        result = grade_file(path, name, config.settings(exercise_id), runner, answer=matched.answers.get(path))
        if len(mine) > 1:  # say which copy counted, so a student who uploaded two is not left guessing
            others = ", ".join(p.relative_to(folder).as_posix() for p in mine[1:])
            result = replace(result, output=say("intake: which copy", output=result.output, graded=name,
                                                others=others))
        results.append(result)
    return results


def grade_submission(folder: Path, config: BundleConfig, runner: Runner,
                     matched: Matched | None = None) -> list[Result]:
    """grade_folder with the bundle's runner (container.started_runner, launched before this module was
    imported). Never raises: whatever fails is a `grader_error` Result for the exercises it touched, so
    that a platform always gets results for every exercise."""
    try:
        import torch

        torch.set_num_threads(1)  # the reference's tensors are tiny
    except Exception:  # noqa: BLE001 - grading reports the failed import per exercise, as grader errors
        pass
    return grade_folder(folder, config, runner, matched)


def report_grader_errors(results: list[Result]) -> None:
    """Prints each grader error with its traceback on stdout, which both platforms show to staff only."""
    for r in results:
        if r.status == Status.GRADER_ERROR:
            shown = r.submission or say("intake: no file")
            print(say("intake: grader error for staff", exercise=r.exercise, file=shown, output=r.output))
            print(r.grader_traceback or "")
