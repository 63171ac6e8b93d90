"""The grader <-> relay messages (runner/protocol.py): each comes back as it went, and a malformed or forged one
is refused with an error that names the field, never half-read."""

import json

import pytest

from autograder.runner.protocol import JobAnswer, JobLimits, JobRequest, ProtocolError, Ready

TOKEN = "ab" * 32
REQUEST = JobRequest(job=120, hidden=0, token=TOKEN, timeout=60.0, memory=2 << 30, processes=None,
                     file_size=64 << 20, output=64 << 10, report=64 << 20)
ANSWER = JobAnswer(status="exited", code=0, signal=None, report=10, report_cut=False, stdout=5, stdout_cut=False,
                   public_stdout=3, hidden_sent=True, clean=True)


def test_each_message_comes_back_as_it_went():
    assert JobRequest.decode(REQUEST.encode()) == REQUEST
    assert JobAnswer.decode(ANSWER.encode()) == ANSWER
    ready = Ready(ready=True, pid=7, isolated=False)
    assert Ready.decode(ready.encode()) == ready
    killed = JobAnswer(status="signaled", code=None, signal="SIGKILL", report=0, report_cut=False, stdout=0,
                       stdout_cut=False, public_stdout=0, hidden_sent=False, clean=False)
    assert JobAnswer.decode(killed.encode()) == killed


def test_the_job_is_told_only_its_limits():
    limits = JobLimits.decode(REQUEST.limits.encode())
    assert limits == JobLimits(memory=2 << 30, timeout=60.0, file_size=64 << 20, processes=None)
    assert set(json.loads(REQUEST.limits.encode())) == {"memory", "timeout", "file_size", "processes"}


def _forged(**change) -> bytes:
    return json.dumps({**json.loads(ANSWER.encode()), **change}).encode()


@pytest.mark.parametrize(("forged", "names"), [
    (b"not json", "not JSON"),
    (b"[1, 2]", "must hold exactly"),
    (None, "must hold exactly"),
    (json.dumps({**json.loads(ANSWER.encode()), "extra": 1}).encode(), "must hold exactly"),
    (_forged(report=-1), "report must be an integer"),
    (_forged(report="10"), "report must be an integer"),
    (_forged(stdout=True), "stdout must be an integer"),
    (_forged(public_stdout=6), "public_stdout must be an integer from 0 to 5"),
    (_forged(status="passed"), "status must be one of"),
    (_forged(clean=1), "clean must be a bool"),
    (_forged(code="0"), "code must be an exit status"),
    (_forged(signal="SIGSEGV"), "signal must be a signal's name"),
])
def test_a_malformed_or_forged_answer_is_refused_with_a_clear_error(forged, names):
    with pytest.raises(ProtocolError, match=names):
        JobAnswer.decode(forged)


def test_an_answer_announcing_more_than_the_bounds_is_refused():
    assert ANSWER.within(report=10, stdout=5) is ANSWER
    with pytest.raises(ProtocolError, match="beyond the bounds"):
        ANSWER.within(report=9, stdout=5)


@pytest.mark.parametrize("change", [{"token": "AB" * 32}, {"token": "ab"}, {"timeout": 0}, {"memory": -1},
                                    {"processes": 1.5}, {"job": None}])
def test_a_malformed_request_is_refused(change):
    with pytest.raises(ProtocolError):
        JobRequest.decode(json.dumps({**json.loads(REQUEST.encode()), **change}).encode())


def test_a_ready_line_must_say_ready():
    with pytest.raises(ProtocolError):
        Ready.decode(b'{"ready": false, "pid": 1, "isolated": true}')


class _Relay:
    """Stands for a relay's stdout: one answer line, then as many bytes as asked for."""

    def __init__(self, line: bytes | None) -> None:
        self._line = line

    def line(self, timeout: float) -> bytes | None:
        return self._line

    def exact(self, n: int, timeout: float) -> bytes:
        return b"r" * n


def _slot(line: bytes | None):
    import io
    from types import SimpleNamespace

    from autograder.runner.limits import Limits
    from autograder.runner.pool import Slot

    slot = Slot.__new__(Slot)  # no process, no cgroup: only what _exchange reads
    slot.limits, slot.memory_bounded = Limits(report=100, output=100), False
    slot.proc, slot.channel = SimpleNamespace(stdin=io.BytesIO()), _Relay(line)
    return slot


def test_the_pool_reads_a_valid_answer_and_refuses_a_forged_one():
    from autograder.runner import Job

    job = Job("residual_add", "", (), {})
    answer, report, printed = _slot(ANSWER.encode())._exchange(job, TOKEN)
    assert answer == ANSWER and (report, printed) == (b"r" * 10, b"r" * 5)
    assert _slot(_forged(status="passed"))._exchange(job, TOKEN) is None
    assert _slot(_forged(report=101))._exchange(job, TOKEN) is None  # beyond the slot's bound
    assert _slot(None)._exchange(job, TOKEN) is None  # it died or hung


def test_a_crash_is_told_from_the_answer_alone():
    from dataclasses import replace

    from autograder.feedback.wording import say
    from autograder.runner.pool import _crash_detail

    before = replace(ANSWER, hidden_sent=False, code=3)
    assert _crash_detail(replace(before, status="signaled", code=None, signal="SIGSEGV"), None) == \
        say("run: ended by SIGSEGV")
    assert _crash_detail(replace(before, status="signaled", code=None, signal="SIGUSR1"), None) == \
        say("run: ended by signal", signal="SIGUSR1")
    assert _crash_detail(before, None) == say("run: exited without report", code=3)
    assert _crash_detail(before, "cut short") == say("run: exited with broken report", code=3, why="cut short")
    assert _crash_detail(replace(before, hidden_sent=True), None) == say("run: ended after hidden inputs")
