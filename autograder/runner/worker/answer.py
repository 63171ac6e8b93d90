"""The job's last stage: runs one job's answer code on every trial and sends back a signed report. Nothing more.

It is a fork of the worker's template (template.py), which never saw a job: the job's bytes and token came down
a pipe of its own (relay.py), and it inherits only the pipes to report on and the snapshot of the grader and
torch the template took before any job. The answer runs under the guard (guard.py) one step at a time
(harness.answer_steps: loading, then each trial), in two phases: loading and the trials on public inputs,
then, once the guard has fetched them, the trials on hidden inputs. Until then the hidden inputs are not in
this process, so nothing the answer printed or raised before can hold one.
"""

from __future__ import annotations

from . import guard


def main(job: bytes, token: bytes, fds: guard.Fds, snapshot: guard.Snapshot) -> None:
    """Never returns: the guard sends the report and ends the process. `snapshot`: the grader's modules as
    the template left them (taken once there, before any job), which the guard compares after every step."""
    from ...exercises import get
    from ...harness import answer_steps
    from ..wire import decode_job

    exercise_id, code, trials, inputs, hidden = decode_job(job)
    first = tuple(t for t in trials if t.input_key not in hidden)
    then = tuple(t for t in trials if t.input_key in hidden)
    seal = guard.Seal(token, fds, snapshot)
    del token
    steps = answer_steps(get(exercise_id), code, first, then, inputs)
    guard.install_hook(snapshot.protected)
    seal.run(steps, bool(then))
