"""Gradescope: `autograder export gradescope` writes autograder.zip, and `python -m autograder.platforms.gradescope`
is what its run_autograder starts in Gradescope's container, one per submission (bundle/grader.py). It
starts the worker before it imports torch, so nothing at the top of this module imports torch.

Gradescope's contract (gradescope-autograders.readthedocs.io, "Specifications"): the zip holds `setup.sh`
(run once, as root, when the image is built) and `run_autograder` (copied to /autograder/run_autograder,
run per submission, as root); the student's files are in /autograder/submission and the grade goes to
/autograder/results/results.json, which is written whatever happens ("Best practices"). The export targets
Gradescope's default base image, Ubuntu 22.04 with its Python 3.10. AUTOGRADER_ROOT replaces /autograder,
and AUTOGRADER_VENV the grader's virtual environment, to try a bundle outside a container.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..bundle import grader
from ..bundle.config import CONFIG_NAME, BundleConfig
from ..bundle.container import STUDENT_USER, leave
from ..bundle.platform import Layout, MemoryLimit
from ..bundle.source import (
    REFERENCES_ENV,
    TORCH_CPU_INDEX,
    TORCH_PIN,
    copy_references,
    copy_source,
    write_text,
    zip_folder,
)
from ..core.result import Result
from ..core.status import Status
from ..feedback.wording import say

VENV = "/opt/autograder-venv"
BASE_IMAGE = "Ubuntu 22.04 (Python 3.10), Gradescope's default base image"

# A line below that ends in one backslash goes on, in setup.sh, on the same line (Python joins them); two
# backslashes are the shell's continuation, written as they are.
SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds this assignment's image ({BASE_IMAGE}).
# AUTOGRADER_VENV replaces {VENV}; AUTOGRADER_TORCH_INDEX replaces PyTorch's CPU wheel index (a mirror, or a
# local index to run this offline).
set -euo pipefail
SOURCE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
VENV="${{AUTOGRADER_VENV:-{VENV}}}"
export DEBIAN_FRONTEND=noninteractive

# The system's part: Python's venv, bubblewrap (the sandbox for student code), useradd. Only what is missing.
missing=()
command -v python3 >/dev/null || missing+=(python3)
python3 -c "import ensurepip" 2>/dev/null || missing+=(python3-venv)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v useradd >/dev/null || missing+=(passwd)
if [ "${{#missing[@]}}" -gt 0 ]; then
    apt-get update
    apt-get install -y --no-install-recommends "${{missing[@]}}"
fi

# Where bubblewrap cannot run in the container, submissions run as this user instead of root.
id -u {STUDENT_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin {STUDENT_USER}

python3 -m venv "$VENV"
"$VENV/bin/pip" install --upgrade pip
# The CPU build of torch, from PyTorch's CPU wheel index (PyPI's default build bundles CUDA: several GB).
"$VENV/bin/pip" install "{TORCH_PIN}" --index-url "${{AUTOGRADER_TORCH_INDEX:-{TORCH_CPU_INDEX}}}"
"$VENV/bin/pip" install "$SOURCE/course"

# The environment is the student user's to read and run, never to write; this folder (the configuration
# with the term's salt, the references) is root's alone.
chmod -R a+rX,go-w "$VENV"
chown -R root:root "$SOURCE"
chmod -R go-rwx "$SOURCE"

"$VENV/bin/python" -I -c "import autograder.platforms.gradescope, torch; \
print('grader ready, torch', torch.__version__)"
"$VENV/bin/python" -I -c "from autograder.runner.sandbox import bwrap_problem as p; w = p(); \\
print('bubblewrap runs here' if w is None else \
f'bubblewrap does not run here ({{w}}): submissions will run as {STUDENT_USER}')"
"""

RUN_AUTOGRADER = f"""#!/usr/bin/env bash
# Gradescope runs this once per submission, as root. It grades $ROOT/submission and always writes
# $ROOT/results/results.json. AUTOGRADER_ROOT replaces /autograder, AUTOGRADER_VENV the environment and
# AUTOGRADER_PYTHON its interpreter (to try the bundle outside a container).
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-${{AUTOGRADER_VENV:-{VENV}}}/bin/python}}"
[ -x "$PYTHON" ] || PYTHON=python3
# The answers the grader compares with: in the unzipped bundle, beside the installed package, not in it.
export {REFERENCES_ENV}="$ROOT/source/references"
# -I: nothing from the working folder or PYTHON* variables is imported into the grader.
exec "$PYTHON" -I -m autograder.platforms.gradescope --root "$ROOT"
"""

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
"""Gradescope's visibilities of a test; the course's hidden checks take one (--hidden-visibility)."""
DEFAULT_MB = 768
"""Gradescope's default memory limit per container (its troubleshooting page); raised in Autograder Settings."""
_WHOLE_SUBMISSION = (Status.NOT_ATTEMPTED, Status.TIMED_OUT, Status.CRASHED, Status.MALFORMED, Status.GRADER_ERROR)
"""Statuses whose message is about the whole submission (every check got 0): safe to show in full."""


def export(out: Path, config: BundleConfig) -> Path:
    """Writes OUT/autograder.zip for the exercises of `config`; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        stage = Path(tmp)
        write_text(stage / "setup.sh", SETUP_SH, executable=True)
        write_text(stage / "run_autograder", RUN_AUTOGRADER, executable=True)
        write_text(stage / CONFIG_NAME, config.to_json())
        copy_source(stage / "course")
        copy_references(stage / "references", config.exercises)  # outside course/: pip never installs it
        return zip_folder(stage, out / "autograder.zip")


def _shown(result: Result) -> Result:
    """What a student sees of a result: a grader error's detail stays in the log (report_grader_errors)."""
    if result.status != Status.GRADER_ERROR:
        return result
    return replace(result, output=say("platforms: gradescope grader fault"), tests=())


def _when(visibility: str) -> str:
    """When a student sees the checks on hidden inputs, in words."""
    return {"after_due_date": say("platforms: gradescope shown after due date"),
            "after_published": say("platforms: gradescope shown after published"),
            "hidden": say("platforms: gradescope shown to staff")}[visibility]


def _summary(result: Result, hidden_visibility: str) -> str:
    """The top-level line for one exercise. While hidden checks are hidden, it counts public points only."""
    hidden = [t for t in result.tests if t.visibility != "visible"]
    if result.status in _WHOLE_SUBMISSION or not hidden or hidden_visibility == "visible":
        return f"{result.exercise}: {result.output}"
    public = [t for t in result.tests if t.visibility == "visible"]
    return say("platforms: gradescope public points", exercise=result.exercise, score=sum(t.score for t in public),
               max_score=sum(t.max_score for t in public), hidden=len(hidden), when=_when(hidden_visibility))


def hidden_visibility(config: BundleConfig) -> str:
    return config.options.get("hidden_visibility", "after_due_date")


def to_gradescope(results: list[Result], config: BundleConfig, execution_time: float | None = None,
                  note: str = "") -> dict:
    """Gradescope's results.json from the course's Results (one per exercise of the bundle). `execution_time`:
    the run's wall clock (default: the sum of the exercises' own); `note`: a line for the whole submission."""
    from ..exercises import EXERCISES

    tests = []
    several = len(results) > 1
    shown = [_shown(r) for r in results]
    for i, result in enumerate(shown, 1):
        known = EXERCISES.get(result.exercise)  # an unknown id (from a file's metadata) numbers by position
        number = known.number if known is not None else i
        prefix = f"{number}. {result.exercise}: " if several else ""
        if not result.tests:  # unreadable, missing or the grader's fault: one entry with the points and why
            tests.append({"name": prefix + ("grader error" if result.status == Status.GRADER_ERROR else "submission"),
                          "number": f"{number}", "score": 0.0, "max_score": result.max_score,
                          "status": Status.FAILED.value,
                          "output": result.output, "visibility": "visible", "tags": [result.exercise]})
        for j, t in enumerate(result.tests, 1):
            hidden = t.visibility != "visible"
            output = t.output if hidden else "\n\n".join(x for x in (t.description, t.output) if x)
            tests.append({
                "name": prefix + t.name + (" (hidden inputs)" if hidden else ""),
                "number": f"{number}.{j}",
                "score": t.score,
                "max_score": t.max_score,
                "status": t.status.value,
                "output": output,
                "visibility": hidden_visibility(config) if hidden else "visible",
                "tags": [result.exercise],
            })
    seconds = execution_time if execution_time is not None else sum(r.execution_time for r in results)
    lines = [_summary(r, hidden_visibility(config)) for r in shown] + ([note] if note else [])
    return {
        "score": round(sum(r.score for r in shown), 4),
        "execution_time": round(seconds, 2),
        "output": "\n".join(lines),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"exercises": [
            {"exercise": r.exercise, "status": r.status.value, "score": r.score, "max_score": r.max_score,
             "file": r.submission} for r in results]},
    }


def broken_bundle(why: str, execution_time: float) -> dict:
    """results.json when the bundle itself cannot grade (its configuration is unreadable): 0, and why."""
    return {"score": 0.0, "execution_time": round(execution_time, 2),
            "output": say("platforms: gradescope broken bundle", why=why),
            "output_format": "text", "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


class Gradescope:
    """Gradescope's layout, limits, bundle and results (bundle/platform.py)."""

    name = "gradescope"
    summary = "autograder.zip for a Gradescope assignment"
    layout = Layout(root="/autograder", submission="submission", results="results", private=("source", "submission"))
    memory = MemoryLimit(DEFAULT_MB, say("platforms: gradescope memory setting"))

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--hidden-visibility", choices=VISIBILITIES, default="after_due_date",
                            help="Gradescope visibility of the checks on hidden inputs (default: after_due_date)")

    def options(self, args: argparse.Namespace) -> dict[str, str]:
        return {"hidden_visibility": args.hidden_visibility}

    def export(self, out: Path, config: BundleConfig, args: argparse.Namespace) -> list[str]:
        path = export(out, config)
        return [say("platforms: gradescope wrote", path=path, image=BASE_IMAGE),
                say("platforms: gradescope sandbox", user=STUDENT_USER)]

    def add_container_options(self, parser: argparse.ArgumentParser) -> None:
        pass

    def config_path(self, root: Path, args: argparse.Namespace) -> Path:
        return root / "source" / CONFIG_NAME

    def graded(self, config: BundleConfig, args: argparse.Namespace) -> BundleConfig:
        return config

    def results(self, results: list[Result], config: BundleConfig, seconds: float, note: str) -> dict[str, Any]:
        return to_gradescope(results, config, seconds, note)

    def broken(self, why: str, seconds: float) -> dict[str, Any]:
        return broken_bundle(why, seconds)

    def message(self, data: dict[str, Any]) -> str:
        return str(data.get("output", ""))


PLATFORM = Gradescope()

if __name__ == "__main__":
    leave(grader.main(PLATFORM))
