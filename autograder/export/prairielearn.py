"""PrairieLearn: `autograder export prairielearn` writes one externally graded question per exercise, and
`python -m autograder.export.prairielearn` is the grader its containers run.

PrairieLearn's contract (docs "External Grading"): a question's info.json names a Docker image, the
course files to mount (`serverFilesCourse`) and an entrypoint; the student's files are in /grade/student
and the result goes to /grade/results/results.json: `score` in [0, 1], `tests` with `points` and
`max_points`, and `gradable: false` for input that cannot be graded (no attempt is used up).
PrairieLearn has no per-test visibility: hidden checks show pass/fail and their sanitized message only.
AUTOGRADER_ROOT replaces /grade, to test a question outside a container.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import uuid
from html import escape
from pathlib import Path

from ..exercises import EXERCISES
from ..files import json_text, write_atomically
from ..result import Result
from .container import CONFIG_NAME, BundleConfig, grade_folder, make_runner, notebook_name
from .source import (
    CHECKOUT,
    REFERENCES_ENV,
    TORCH_CPU_INDEX,
    TORCH_PIN,
    ExportError,
    copy_references,
    copy_source,
    write_text,
)

TOPIC = "In-place autograd errors"
QUESTIONS = "inplace_autograd"  # questions/<this>/<NN_id>/
SERVER_DIR = "inplace_autograder"  # serverFilesCourse/<this>/
DEFAULT_IMAGE = "inplace-autograd-course/grader:0.1.0"
_UUID_NAMESPACE = uuid.UUID("6f1c2a1e-54d5-4b1a-9a5e-2f0d3c1b7e42")  # stable question uuids across exports

DOCKERFILE = f"""# The grading image for the exported PrairieLearn questions: Python, the CPU build of torch, this course.
# Build and push it where PrairieLearn can pull it (book/reference/platforms.md), then use its name in info.json.
FROM python:3.12-slim
RUN pip install --no-cache-dir "{TORCH_PIN}" --index-url {TORCH_CPU_INDEX}
COPY course /opt/course
RUN pip install --no-cache-dir /opt/course && python -c "import autograder.export.prairielearn, torch"
"""

RUN_SH = """#!/usr/bin/env bash
# PrairieLearn's entrypoint: run.sh EXERCISE_ID. Grades $ROOT/student into $ROOT/results/results.json.
# AUTOGRADER_ROOT replaces /grade and AUTOGRADER_PYTHON the interpreter (to test outside a container).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${AUTOGRADER_ROOT:-/grade}"
PYTHON="${AUTOGRADER_PYTHON:-python3}"
# The answers the grader compares with: in the course's server files, never in the (shareable) image.
export REFERENCES_ENV="$HERE/references"
exec "$PYTHON" -m autograder.export.prairielearn --root "$ROOT" --config "$HERE/CONFIG_NAME" --exercise "$1"
""".replace("CONFIG_NAME", CONFIG_NAME).replace("REFERENCES_ENV", REFERENCES_ENV)

QUESTION_HTML = """<pl-question-panel>
  <p><strong>Exercise {number}: {title}</strong></p>
  <p>Download <a href="{{{{options.client_files_question_url}}}}/{notebook}">{notebook}</a>, open it in
  Jupyter, run the failure cell to see the error, write your fix in the answer cell and check it with
  <code>check("{id}")</code>. Then upload the notebook here (keep its name).</p>
  <p>The grader runs more checks than the self-check, on inputs you do not see; hidden checks tell you
  that they failed and why in general terms.</p>
</pl-question-panel>

<pl-file-upload file-names="{notebook}"></pl-file-upload>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def info_json(exercise_id: str, image: str, timeout: float) -> dict:
    ex = EXERCISES[exercise_id]
    return {
        "uuid": str(uuid.uuid5(_UUID_NAMESPACE, exercise_id)),
        "title": f"{ex.number}. {ex.title}",
        "topic": TOPIC,
        "tags": ["inplace-autograd", exercise_id],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image,
            "serverFilesCourse": [f"{SERVER_DIR}/"],
            "entrypoint": f"/grade/serverFilesCourse/{SERVER_DIR}/run.sh {exercise_id}",
            # the in-container grade plus the torch import and the reference; PrairieLearn's cap is 600 s
            "timeout": int(min(600, timeout + 60)),
        },
    }


def export(out: Path, config: BundleConfig, image: str = DEFAULT_IMAGE) -> list[Path]:
    """Writes OUT/questions/, OUT/serverFilesCourse/ and OUT/graders/ (copy them into a PrairieLearn course
    repository); returns the question folders."""
    if not image or any(c.isspace() for c in image):
        raise ExportError(f"--image must be a Docker image name, got {image!r}")
    written = []
    for exercise_id in config.exercises:
        ex = EXERCISES[exercise_id]
        notebook = notebook_name(exercise_id)
        source_notebook = CHECKOUT / "exercises" / notebook
        if not source_notebook.is_file():
            raise ExportError(f"{source_notebook} is missing: run `autograder assign` first")
        folder = out / "questions" / QUESTIONS / notebook.removesuffix(".ipynb")
        write_text(folder / "info.json", json.dumps(info_json(exercise_id, image, config.timeout), indent=2) + "\n")
        write_text(folder / "question.html", QUESTION_HTML.format(number=ex.number, title=escape(ex.title),
                                                                  notebook=notebook, id=exercise_id))
        (folder / "clientFilesQuestion").mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_notebook, folder / "clientFilesQuestion" / notebook)
        written.append(folder)
    server = out / "serverFilesCourse" / SERVER_DIR
    write_text(server / "run.sh", RUN_SH, executable=True)
    write_text(server / CONFIG_NAME, config.to_json())
    copy_references(server / "references")
    grader = out / "graders" / "inplace-autograder"
    write_text(grader / "Dockerfile", DOCKERFILE)
    copy_source(grader / "course")
    return written


def to_prairielearn(result: Result) -> dict:
    """PrairieLearn's results.json for one exercise's Result."""
    if result.status == "grader_error" or (result.status in ("malformed", "not_attempted") and not result.tests):
        return {"gradable": False, "message": result.output, "format_errors": [result.output]}
    tests = []
    for t in result.tests:
        entry = {"name": t.name, "points": t.score, "max_points": t.max_score, "message": t.output, "output": ""}
        if t.visibility == "visible":
            entry["description"] = t.description
        else:  # hidden: pass/fail and the grader's sanitized message, nothing else
            entry["name"] += " (hidden inputs)"
        tests.append(entry)
    return {
        "gradable": True,
        "score": round(result.score / result.max_score, 6) if result.max_score else 0.0,
        "message": result.output,
        "output": "",
        "tests": tests,
    }


def run(root: Path, config_path: Path, exercise_id: str) -> int:
    """Grades ROOT/student as `exercise_id`; writes ROOT/results/results.json (PrairieLearn creates no folder)."""
    import torch

    torch.set_num_threads(1)  # the reference's tensors are tiny
    config = BundleConfig.load(config_path)
    if exercise_id not in config.exercises:
        print(f"exercise {exercise_id!r} is not one this export grades ({', '.join(config.exercises)})")
        return 2
    config = BundleConfig(exercises=(exercise_id,), timeout=config.timeout, salt=config.salt)
    with make_runner() as runner:
        (result,) = grade_folder(root / "student", config, runner)
    data = to_prairielearn(result)
    write_atomically(root / "results" / "results.json", json_text(data))
    print(result.output)
    return 1 if result.status == "grader_error" else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder.export.prairielearn", description=__doc__)
    p.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/grade")))
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--exercise", required=True)
    args = p.parse_args(argv)
    return run(args.root, args.config, args.exercise)


if __name__ == "__main__":
    sys.exit(main())
