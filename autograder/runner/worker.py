"""The worker: loads a job, runs the answer code on every trial, writes plain results. Nothing more.

Run as `python -m autograder.runner.worker JOB_DIR` inside the sandbox the runner prepared.
"""

from __future__ import annotations

import sys
from pathlib import Path

READY = "ready"


def main(argv: list[str]) -> int:
    directory = Path(argv[0])
    from ..exercises import get
    from ..harness import run_answer
    from .wire import read_job, write_report

    exercise_id, code, trials, inputs = read_job(directory)
    exercise = get(exercise_id)
    # Written before any answer code runs: without it, a failed worker is the grader's fault.
    (directory / READY).write_text("ready")
    report = run_answer(exercise, code, trials, inputs)
    write_report(directory, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
