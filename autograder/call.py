"""The one door into code under test: `Call.from_call(fn, ...)` runs it and keeps what happened (after
pytest's CallInfo). Loading an answer, each trial, the culprit locator's re-run, the notebook's self-check
and the worker's guard all go through it.

The policy, written here once: whatever the code raises is recorded, never let out. Every BaseException
counts: a class of the student's own, SystemExit, KeyboardInterrupt. Only a stop passes, and only one that
a signal handler of `stopping` raised: Ctrl-C, or the time limit of a self-check. It is told apart by
identity, not by type, so code that raises KeyboardInterrupt, or Stop, itself stops nothing. Code that
catches a stop and carries on does not cancel it either: the Call raises it once the code returns. A worker
installs no such handler. The relay stops a job by killing its process (the deadline, RLIMIT_CPU), and no
exception can stand in for that.

Nothing is captured here: a job's output is read from its descriptors by the relay, and in process,
what the code prints goes where the student can see it.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .feedback.wording import say


class Stop(KeyboardInterrupt):
    """A stop asked for while code under test ran: Ctrl-C, or (`timed_out`) a time limit."""

    def __init__(self, why: str, timed_out: bool) -> None:
        super().__init__(why)
        self.timed_out = timed_out


_pending: Stop | None = None
"""The stop a handler of `stopping` raised, until that block ends: the only exception a Call lets out."""


@dataclass(frozen=True)
class Call:
    """One call into code under test: the value it returned, or what it raised, and how long it ran."""

    value: Any
    error: BaseException | None
    seconds: float

    @classmethod
    def from_call(cls, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Call:
        start = time.perf_counter()
        value = error = None
        try:
            value = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - the policy (module docstring): all of it is the code's doing
            error = e
        if _pending is not None:  # asked for while the code ran: it stops, whatever the code did with it
            raise _pending
        return cls(value, error, time.perf_counter() - start)


@contextmanager
def stopping(seconds: float | None = None) -> Iterator[None]:
    """Inside the block, Ctrl-C and, after `seconds`, a time limit raise a Stop that every Call lets out.
    Only on the main thread (the one that gets signals); elsewhere the block changes nothing. Not nested."""
    global _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(why: str, timed_out: bool) -> Callable[[int, Any], None]:
        def handler(signum: int, frame: Any) -> None:
            global _pending
            _pending = Stop(why, timed_out)
            raise _pending

        return handler

    interrupt = signal.signal(signal.SIGINT, stop(say("run: interrupted"), False))
    alarm = signal.signal(signal.SIGALRM, stop(say("run: out of time", seconds=seconds), True)) if seconds else None
    if seconds:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, alarm)
        signal.signal(signal.SIGINT, interrupt)
        _pending = None
