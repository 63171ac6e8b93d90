"""The grader <-> relay messages (relay.py), typed: each is JSON on the wire, and `decode` checks every field's
type and bound, for the relay's side is not trusted (a job that escaped could write anything there): nothing
is unpickled, nothing unchecked reaches the grader. Free of torch, like the relay.

- `Ready`, relay -> grader, once: one JSON line when the template has warmed up.
- `JobRequest`, grader -> relay, per job: a frame (fdio) of JSON, then the `job` bytes of the job
  (wire.encode_job), then the `hidden` bytes of its hidden inputs (wire.encode_inputs).
- `JobLimits`, relay -> the job's process: the first frame on its pipe (job.py), then its token, then the job.
- `JobAnswer`, relay -> grader, per job: one JSON line, then the `report` bytes the job sent on its report pipe
  and the `stdout` bytes it printed, of which the first `public_stdout` before it asked for the hidden inputs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, TypeVar, get_args

TOKEN_BYTES = 32
MAX_COUNT = 1 << 40
"""A size or limit beyond this is no honest message's."""
SIGNAL_NAME = 20
Ended = Literal["exited", "signaled", "timed_out"]


class ProtocolError(Exception):
    """A message of the grader <-> relay protocol is malformed: which field, and why."""


M = TypeVar("M", bound="_Message")


def _count(name: str, value: Any, bound: int = MAX_COUNT) -> int:
    if type(value) is not int or not 0 <= value <= bound:
        raise ProtocolError(f"{name} must be an integer from 0 to {bound}, not {value!r:.40}")
    return value


class _Message:
    """JSON in, JSON out: `decode` checks that the object has exactly the class's fields, then `_check`s them."""

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()  # type: ignore[call-overload]

    @classmethod
    def decode(cls: type[M], data: bytes | None) -> M:
        try:
            raw = json.loads(data) if data is not None else None
        except (ValueError, RecursionError) as e:
            raise ProtocolError(f"a {cls.__name__} is not JSON ({type(e).__name__})") from None
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if not isinstance(raw, dict) or set(raw) != names:
            got = sorted(raw)[:12] if isinstance(raw, dict) else type(raw).__name__
            raise ProtocolError(f"a {cls.__name__} must hold exactly {sorted(names)}, not {got}")
        message = cls(**raw)  # type: ignore[call-arg]
        message._check()
        return message

    def _check(self) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Ready(_Message):
    ready: bool
    pid: int
    isolated: bool
    """Whether each job gets namespaces of its own."""

    def _check(self) -> None:
        if self.ready is not True or type(self.isolated) is not bool:
            raise ProtocolError("a Ready must say ready: true and isolated: a bool")
        _count("pid", self.pid)


@dataclass(frozen=True)
class JobLimits(_Message):
    memory: int
    timeout: float
    file_size: int
    processes: int | None
    """RLIMIT_NPROC; None where the slot's cgroup bounds the job's processes."""

    def _check(self) -> None:
        _count("memory", self.memory)
        _count("file_size", self.file_size)
        if self.processes is not None:
            _count("processes", self.processes)
        if type(self.timeout) not in (int, float) or not 0 < self.timeout < MAX_COUNT:
            raise ProtocolError(f"timeout must be a positive number of seconds, not {self.timeout!r:.40}")


@dataclass(frozen=True)
class JobRequest(_Message):
    job: int
    """Bytes of the job that follow."""
    hidden: int
    """Bytes of its hidden inputs that follow the job."""
    token: str
    """The job's TOKEN_BYTES signing token, in hex."""
    timeout: float
    memory: int
    processes: int | None
    file_size: int
    output: int
    """Bytes of what the job prints that the relay keeps (the rest it reads and drops)."""
    report: int
    """Bytes of the job's report that the relay keeps."""

    @property
    def limits(self) -> JobLimits:
        """What the job's process is told (its rlimits)."""
        return JobLimits(memory=self.memory, timeout=self.timeout, file_size=self.file_size,
                         processes=self.processes)

    def _check(self) -> None:
        for name in ("job", "hidden", "output", "report"):
            _count(name, getattr(self, name))
        if not isinstance(self.token, str) or len(self.token) != 2 * TOKEN_BYTES \
                or any(c not in "0123456789abcdef" for c in self.token):
            raise ProtocolError(f"token must be {TOKEN_BYTES} bytes in lowercase hex")
        self.limits._check()


@dataclass(frozen=True)
class JobAnswer(_Message):
    status: Ended
    code: int | None
    """The exit status, where the job exited."""
    signal: str | None
    """The signal's name, where one ended the job."""
    report: int
    report_cut: bool
    stdout: int
    stdout_cut: bool
    public_stdout: int
    hidden_sent: bool
    clean: bool
    """Whether the relay emptied the scratch folder after the job (if not, the grader replaces the worker)."""

    def within(self, report: int, stdout: int) -> JobAnswer:
        """Itself, where the bytes it announces fit the grader's bounds; else ProtocolError."""
        if self.report > report or self.stdout > stdout:
            raise ProtocolError(f"the answer announces {self.report} bytes of report and {self.stdout} of output, "
                                f"beyond the bounds {report} and {stdout}")
        return self

    def _check(self) -> None:
        if self.status not in get_args(Ended):
            raise ProtocolError(f"status must be one of {get_args(Ended)}, not {self.status!r:.40}")
        for name in ("report_cut", "stdout_cut", "hidden_sent", "clean"):
            if type(getattr(self, name)) is not bool:
                raise ProtocolError(f"{name} must be a bool")
        _count("report", self.report)
        _count("public_stdout", self.public_stdout, _count("stdout", self.stdout))
        if self.code is not None and (self.status != "exited" or type(self.code) is not int
                                      or not 0 <= self.code <= 255):
            raise ProtocolError(f"code must be an exit status (0 to 255) of an exited job, not {self.code!r:.40}")
        if self.signal is not None and (self.status != "signaled" or not isinstance(self.signal, str)
                                        or not 0 < len(self.signal) <= SIGNAL_NAME):
            raise ProtocolError(f"signal must be a signal's name (of a signaled job), not {self.signal!r:.40}")
