"""The worker: runs one job's answer code on every trial and sends back a signed report. Nothing more.

It is a fork of a zygote (zygote.py), which hands it the job's bytes, the job's token and the pipe to
report on. The answer runs under the guard (guard.py); the report goes up the pipe, never into a file.
"""

from __future__ import annotations

from . import guard


def main(job: bytes, token: bytes, report_fd: int, snapshot: guard.Snapshot) -> None:
    """Never returns: the guard sends the report and ends the process. `snapshot`: the grader's modules as
    the zygote left them (taken once there, before any job)."""
    from ..exercises import get
    from ..harness import run_answer, settle_torch
    from .wire import decode_job

    exercise_id, code, trials, inputs = decode_job(job)
    exercise = get(exercise_id)
    settle_torch()
    seal = guard.Seal(token, report_fd, snapshot)
    del token
    guard.install_hook()
    seal.run(lambda: run_answer(exercise, code, trials, inputs))
