"""Gradescope: `autograder export gradescope` writes autograder.zip, and `python -m autograder.export.gradescope`
is what its run_autograder starts in Gradescope's container, one per submission.

Gradescope's contract (gradescope-autograders.readthedocs.io, "Specifications"): the zip holds `setup.sh`
(run once, as root, when the image is built) and `run_autograder` (copied to /autograder/run_autograder,
run per submission); the student's files are in /autograder/submission and the grade goes to
/autograder/results/results.json. AUTOGRADER_ROOT replaces /autograder, to test a bundle outside a container.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ..exercises import EXERCISES
from ..files import json_text, write_atomically
from ..result import Result
from .container import CONFIG_NAME, BundleConfig, grade_folder, make_runner
from .source import REFERENCES_ENV, TORCH_CPU_INDEX, TORCH_PIN, copy_references, copy_source, write_text, zip_folder

VENV = "/opt/autograder-venv"

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds this assignment's image (Ubuntu base image).
set -euo pipefail
SOURCE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
python3 -m venv {VENV}
{VENV}/bin/pip install --upgrade pip
# The CPU build of torch, from PyTorch's CPU wheel index (PyPI's default build bundles CUDA: several GB).
# AUTOGRADER_TORCH_INDEX replaces that index (a mirror, or a local one to try this script offline).
{VENV}/bin/pip install "{TORCH_PIN}" --index-url "${{AUTOGRADER_TORCH_INDEX:-{TORCH_CPU_INDEX}}}"
{VENV}/bin/pip install "$SOURCE/course"
{VENV}/bin/python -c "import autograder.export.gradescope, torch; print('grader ready, torch', torch.__version__)"
"""

RUN_AUTOGRADER = f"""#!/usr/bin/env bash
# Gradescope runs this once per submission. It grades $ROOT/submission and writes $ROOT/results/results.json.
# AUTOGRADER_ROOT replaces /autograder and AUTOGRADER_PYTHON the interpreter (to test outside a container).
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-{VENV}/bin/python}}"
[ -x "$PYTHON" ] || PYTHON=python3
# The answers the grader compares with: in the unzipped bundle, beside the installed package, not in it.
export {REFERENCES_ENV}="$ROOT/source/references"
exec "$PYTHON" -m autograder.export.gradescope --root "$ROOT"
"""

_WHOLE_SUBMISSION = ("not_attempted", "timed_out", "crashed", "malformed")
"""Statuses whose message is about the whole submission (every check got 0): safe to show in full."""
_WHEN = {
    "after_due_date": "after the due date",
    "after_published": "when grades are published",
    "hidden": "to course staff only",
}


def export(out: Path, config: BundleConfig) -> Path:
    """Writes OUT/autograder.zip for the exercises of `config`; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        stage = Path(tmp)
        write_text(stage / "setup.sh", SETUP_SH, executable=True)
        write_text(stage / "run_autograder", RUN_AUTOGRADER, executable=True)
        write_text(stage / CONFIG_NAME, config.to_json())
        copy_source(stage / "course")
        copy_references(stage / "references")  # outside course/: pip never installs it
        return zip_folder(stage, out / "autograder.zip")


def _summary(result: Result, hidden_visibility: str) -> str:
    """The top-level line for one exercise. While hidden checks are hidden, it counts public points only."""
    hidden = [t for t in result.tests if t.visibility != "visible"]
    if result.status in _WHOLE_SUBMISSION or not hidden or hidden_visibility == "visible":
        return f"{result.exercise}: {result.output}"
    public = [t for t in result.tests if t.visibility == "visible"]
    return (f"{result.exercise}: public checks {sum(t.score for t in public):g}/{sum(t.max_score for t in public):g} "
            f"points; {len(hidden)} more check(s) on hidden inputs, shown {_WHEN[hidden_visibility]}.")


def to_gradescope(results: list[Result], config: BundleConfig) -> dict:
    """Gradescope's results.json from the course's Results (one per exercise of the bundle)."""
    tests = []
    several = len(results) > 1
    for i, result in enumerate(results, 1):
        known = EXERCISES.get(result.exercise)  # an unknown id (from a file's metadata) numbers by position
        number = known.number if known is not None else i
        prefix = f"{number}. {result.exercise}: " if several else ""
        if not result.tests:  # unreadable or missing: one entry carrying the exercise's points and the reason
            tests.append({"name": prefix + "submission", "number": f"{number}", "score": 0.0,
                          "max_score": result.max_score, "status": "failed", "output": result.output,
                          "visibility": "visible", "tags": [result.exercise]})
        for i, t in enumerate(result.tests, 1):
            hidden = t.visibility != "visible"
            output = t.output if hidden else "\n\n".join(x for x in (t.description, t.output) if x)
            tests.append({
                "name": prefix + t.name + (" (hidden inputs)" if hidden else ""),
                "number": f"{number}.{i}",
                "score": t.score,
                "max_score": t.max_score,
                "status": t.status,
                "output": output,
                "visibility": config.hidden_visibility if hidden else "visible",
                "tags": [result.exercise],
            })
    return {
        "score": round(sum(r.score for r in results), 4),
        "execution_time": round(sum(r.execution_time for r in results), 2),
        "output": "\n".join(_summary(r, config.hidden_visibility) for r in results),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"exercises": [
            {"exercise": r.exercise, "status": r.status, "score": r.score, "max_score": r.max_score,
             "file": r.submission} for r in results]},
    }


def run(root: Path) -> int:
    """Grades ROOT/submission with the bundle's config; writes ROOT/results/results.json."""
    import torch

    torch.set_num_threads(1)  # the reference's tensors are tiny
    config = BundleConfig.load(root / "source" / CONFIG_NAME)
    with make_runner() as runner:
        results = grade_folder(root / "submission", config, runner)
    errors = [r for r in results if r.status == "grader_error"]
    if errors:
        # No results.json: Gradescope then reports a failed autograder run, which staff rerun; never a 0.
        for r in errors:
            print(f"{r.exercise}: {r.output}")
        return 1
    data = to_gradescope(results, config)
    write_atomically(root / "results" / "results.json", json_text(data))  # always encodes (lone surrogates)
    print(data["output"])
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder.export.gradescope", description=__doc__)
    p.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")))
    return run(p.parse_args(argv).root)


if __name__ == "__main__":
    sys.exit(main())
