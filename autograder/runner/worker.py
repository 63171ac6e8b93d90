"""The worker: runs one job's answer code on every trial and sends back a signed report. Nothing more.

It is a fork of a zygote (zygote.py), which hands it the job's bytes, the job's token and the pipes to
report on. The answer runs under the guard (guard.py) in two phases: loading and the trials on public
inputs, then, once the guard has fetched them, the trials on hidden inputs. Until then the hidden inputs
are not in this process, so nothing the answer printed or raised before can hold one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from . import guard


@dataclass
class _Started:
    """What the public phase hands on: its report (the guard encodes it before the hidden phase starts,
    which could otherwise rewrite it), and what the hidden phase needs."""

    public: Any  # RunReport
    namespace: dict[str, Any]
    pristine: dict[str, Any]


def main(job: bytes, token: bytes, fds: guard.Fds, snapshot: guard.Snapshot) -> None:
    """Never returns: the guard sends the report and ends the process. `snapshot`: the grader's modules as
    the zygote left them (taken once there, before any job)."""
    from ..exercises import get
    from ..harness import run_trials, settle_torch, start_answer
    from ..outcome import RunReport
    from .wire import decode_job

    exercise_id, code, trials, inputs, hidden = decode_job(job)
    exercise = get(exercise_id)
    first = tuple(t for t in trials if f"{t.scenario}/{t.dtype}" not in hidden)
    second = tuple(t for t in trials if f"{t.scenario}/{t.dtype}" in hidden)
    settle_torch()
    seal = guard.Seal(token, fds, snapshot)
    del token

    def public_phase() -> RunReport | _Started:
        start = time.perf_counter()
        namespace, pristine, ended = start_answer(exercise, code)
        if ended is not None:
            return replace(ended, seconds=time.perf_counter() - start)
        outcomes = run_trials(exercise, namespace, first, inputs, pristine=pristine)
        report = RunReport(outcomes=outcomes, seconds=time.perf_counter() - start)
        return _Started(report, namespace, pristine) if second else report

    def hidden_phase(started: _Started, more: dict) -> RunReport:
        start = time.perf_counter()
        outcomes = run_trials(exercise, started.namespace, second, {**inputs, **more}, pristine=started.pristine)
        return RunReport(outcomes=outcomes, seconds=time.perf_counter() - start)

    guard.install_hook(snapshot.protected)
    seal.run(public_phase, hidden_phase if second else None, _Started)
