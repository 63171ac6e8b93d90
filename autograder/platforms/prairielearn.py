"""PrairieLearn: `autograder export prairielearn` writes one externally graded question per exercise, and
`python -m autograder.platforms.prairielearn` is the grader its containers run (bundle/grader.py).

PrairieLearn's contract (docs "External Grading"): a question's info.json names a Docker image, the
course files to mount (`serverFilesCourse`) and an entrypoint, run as root; the student's files are in
/grade/student and the result goes to /grade/results/results.json: `score` in [0, 1], `tests` with
`points` and `max_points`, and `gradable: false` for input that cannot be graded (no attempt is used up).
PrairieLearn reads results.json only when the entrypoint exits 0 (its grader host), so the grader always
exits 0 with results, `gradable: false` and a message when it fails itself. PrairieLearn has no per-test
visibility: hidden checks show pass/fail and their sanitized message only. AUTOGRADER_ROOT replaces /grade,
to test a question outside a container. The grader starts its worker before it imports torch, so nothing
at the top of this module imports torch.
"""

from __future__ import annotations

import argparse
import json
import shutil
import uuid
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

from ..bundle import grader
from ..bundle.config import CONFIG_NAME, BundleConfig
from ..bundle.container import STUDENT_USER, leave
from ..bundle.platform import Layout, MemoryLimit
from ..bundle.source import (
    CHECKOUT,
    REFERENCES_ENV,
    TORCH_CPU_INDEX,
    TORCH_PIN,
    ExportError,
    copy_references,
    copy_source,
    write_text,
)
from ..core.result import Result
from ..core.status import Status
from ..feedback.wording import exercise_text, say

TOPIC = say("platforms: prairielearn topic")  # the questions' topic, as students see it in the course
QUESTIONS = "inplace_autograd"  # questions/<this>/<NN_id>/
SERVER_DIR = "inplace_autograder"  # serverFilesCourse/<this>/
IMAGE_EXAMPLE = "registry.example.edu/your-course/inplace-grader:1"
"""What --image looks like: a name in a registry namespace the course can push to (no default: a default
would name a namespace nobody taking the course owns)."""
GRADER_FOLDER = "inplace-autograder"  # graders/<this>/: the image's Dockerfile and the course's source
JOB_MEMORY_MB = 2048
"""Memory of a grading job's container on PrairieLearn's graders (grader host's graderDockerMemory, 2 GiB)."""
_UUID_NAMESPACE = uuid.UUID("6f1c2a1e-54d5-4b1a-9a5e-2f0d3c1b7e42")  # stable question uuids across exports

BUILD = "docker build --platform linux/amd64 -t {image} {folder}"
"""PrairieLearn's graders are x86-64 machines: an image built on an ARM machine (an Apple silicon Mac) without
--platform linux/amd64 would not start there."""

DOCKERFILE = f"""\
# The grading image for the exported PrairieLearn questions: Python, the CPU build of torch, this course,
# bubblewrap (the sandbox for student code) and {STUDENT_USER} (who runs student code where bubblewrap cannot).
# Build it for PrairieLearn's x86-64 graders and push it where PrairieLearn can pull it, then use its name in
# info.json (book/reference/platforms.md): {BUILD.format(image="NAME:TAG", folder="THIS_FOLDER")}
FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/* \\
    && useradd --system --no-create-home --shell /usr/sbin/nologin {STUDENT_USER}
RUN pip install --no-cache-dir "{TORCH_PIN}" --index-url {TORCH_CPU_INDEX}
COPY course /opt/course
RUN pip install --no-cache-dir /opt/course && python -I -c "import autograder.platforms.prairielearn, torch"
"""

RUN_SH = """#!/usr/bin/env bash
# PrairieLearn's entrypoint, run as root: run.sh EXERCISE_ID. Grades $ROOT/student into
# $ROOT/results/results.json and exits 0 (PrairieLearn ignores results otherwise), a grader failure being
# `gradable: false`. AUTOGRADER_ROOT replaces /grade and AUTOGRADER_PYTHON the interpreter (to test outside
# a container).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${AUTOGRADER_ROOT:-/grade}"
PYTHON="${AUTOGRADER_PYTHON:-python3}"
# The answers the grader compares with: in the course's server files, never in the (shareable) image.
export REFERENCES_ENV="$HERE/references"
# -I: nothing from the working folder or PYTHON* variables is imported into the grader.
exec "$PYTHON" -I -m autograder.platforms.prairielearn --root "$ROOT" --config "$HERE/CONFIG_NAME" --exercise "${1:-}"
""".replace("CONFIG_NAME", CONFIG_NAME).replace("REFERENCES_ENV", REFERENCES_ENV)


def info_json(exercise_id: str, image: str, timeout: float) -> dict:
    from ..exercises import EXERCISES

    ex = EXERCISES[exercise_id]
    return {
        "uuid": str(uuid.uuid5(_UUID_NAMESPACE, exercise_id)),
        "title": f"{ex.number}. {exercise_text(ex.title)}",
        "topic": TOPIC,
        "tags": ["inplace-autograd", exercise_id],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {  # no "enabled": deprecated; "gradingMethod" says it
            "image": image,
            "serverFilesCourse": [f"{SERVER_DIR}/"],
            "entrypoint": f"/grade/serverFilesCourse/{SERVER_DIR}/run.sh {exercise_id}",
            # the in-container grade plus the torch import and the reference; PrairieLearn's cap is 600 s
            "timeout": int(min(600, timeout + 60)),
        },
    }


def export(out: Path, config: BundleConfig, image: str) -> list[Path]:
    """Writes OUT/questions/, OUT/serverFilesCourse/ and OUT/graders/ (copy them into a PrairieLearn course
    repository); returns the question folders."""
    if not image or any(c.isspace() for c in image):
        raise ExportError(say("platforms: prairielearn bad image", image=image))
    from ..bundle.student_folder import notebook_name
    from ..exercises import EXERCISES

    written = []
    for exercise_id in config.exercises:
        ex = EXERCISES[exercise_id]
        notebook = notebook_name(exercise_id)
        source_notebook = CHECKOUT / "exercises" / notebook
        if not source_notebook.is_file():
            raise ExportError(say("platforms: prairielearn no notebook", notebook=source_notebook))
        folder = out / "questions" / QUESTIONS / notebook.removesuffix(".ipynb")
        write_text(folder / "info.json", json.dumps(info_json(exercise_id, image, config.timeout), indent=2) + "\n")
        title = escape(exercise_text(ex.title))
        write_text(folder / "question.html", say("platforms: prairielearn question", number=ex.number,
                                                 title=title, notebook=notebook, id=exercise_id))
        (folder / "clientFilesQuestion").mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_notebook, folder / "clientFilesQuestion" / notebook)
        written.append(folder)
    server = out / "serverFilesCourse" / SERVER_DIR
    write_text(server / "run.sh", RUN_SH, executable=True)
    write_text(server / CONFIG_NAME, config.to_json())
    copy_references(server / "references", config.exercises)
    grader = out / "graders" / GRADER_FOLDER
    write_text(grader / "Dockerfile", DOCKERFILE)
    copy_source(grader / "course")
    return written


def not_gradable(message: str) -> dict:
    """PrairieLearn's "invalid, not gradable": no points given or taken, no attempt used up."""
    return {"gradable": False, "message": message, "format_errors": [message]}


def to_prairielearn(result: Result) -> dict:
    """PrairieLearn's results.json for one exercise's Result."""
    if result.status == Status.GRADER_ERROR:
        return not_gradable(say("platforms: prairielearn grader fault"))
    if result.status == Status.NOT_ATTEMPTED:  # the notebook as handed out, or no file: not a used attempt
        why = say("platforms: prairielearn untouched", id=result.exercise) if result.tests else result.output
        return not_gradable(say("platforms: prairielearn not answered", why=why))
    if result.status == Status.MALFORMED and not result.tests:
        return not_gradable(result.output)
    tests = []
    for t in result.tests:
        hidden = t.visibility != "visible"  # hidden: pass/fail and the grader's sanitized message, nothing else
        entry: dict[str, Any] = {"name": t.name + (" (hidden inputs)" if hidden else ""), "points": t.score,
                                 "max_points": t.max_score, "message": t.output, "output": ""}
        if not hidden:
            entry["description"] = t.description
        tests.append(entry)
    return {
        "gradable": True,
        "score": round(result.score / result.max_score, 6) if result.max_score else 0.0,
        "message": result.output,
        "output": "",
        "tests": tests,
    }


class PrairieLearn:
    """PrairieLearn's layout, limits, questions and results (bundle/platform.py)."""

    name = "prairielearn"
    summary = "one PrairieLearn question per exercise"
    layout = Layout(root="/grade", submission="student", results="results", private=("serverFilesCourse", "student"))
    memory = MemoryLimit(JOB_MEMORY_MB, None)

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--image", required=True, metavar="NAME:TAG",
                            help="the grading image PrairieLearn pulls: a name in a registry namespace your course "
                                 f"can push to, e.g. {IMAGE_EXAMPLE} (the export writes its Dockerfile)")

    def options(self, args: argparse.Namespace) -> dict[str, str]:
        return {}

    def export(self, out: Path, config: BundleConfig, args: argparse.Namespace) -> list[str]:
        folders = export(out, config, image=args.image)
        return [say("platforms: prairielearn wrote", count=len(folders), questions=out / "questions",
                    server=out / "serverFilesCourse", graders=out / "graders"),
                say("platforms: prairielearn image", image=args.image,
                    build=BUILD.format(image=args.image, folder=out / "graders" / GRADER_FOLDER)),
                say("platforms: prairielearn sandbox", user=STUDENT_USER)]

    def add_container_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--config", type=Path, required=True)
        parser.add_argument("--exercise", required=True)

    def config_path(self, root: Path, args: argparse.Namespace) -> Path:
        return Path(args.config)

    def graded(self, config: BundleConfig, args: argparse.Namespace) -> BundleConfig:
        if args.exercise not in config.exercises:
            raise ExportError(say("platforms: prairielearn wrong exercise", exercise=args.exercise,
                                  exercises=", ".join(config.exercises)))
        return replace(config, exercises=(args.exercise,))

    def results(self, results: list[Result], config: BundleConfig, seconds: float, note: str) -> dict[str, Any]:
        (result,) = results
        return to_prairielearn(result)

    def broken(self, why: str, seconds: float) -> dict[str, Any]:
        return not_gradable(say("platforms: prairielearn grader fault"))  # why: in the job's log, for staff

    def message(self, data: dict[str, Any]) -> str:
        return str(data.get("message", ""))


PLATFORM = PrairieLearn()

if __name__ == "__main__":
    leave(grader.main(PLATFORM))
