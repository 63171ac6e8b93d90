"""The worker's relay: the process of a warm worker that talks to the grader, and the only one that holds a
job's data outside the job's own process. It never forks a job (the template does, template.py), so no job
inherits its memory, and no job can name it: jobs live in PID namespaces below it. Free of torch.

The protocol with the grader, on stdin/stdout, is typed in protocol.py: `Ready` once the template has
warmed up; per job, a `JobRequest` frame followed by the job's bytes and its hidden inputs' bytes, answered by a
`JobAnswer` line followed by the job's report and what it printed.
With the job's process, on pipes made for it alone: three frames on its descriptor 6 (its `JobLimits`,
its token, the job); what it prints on 1 and 2; its report on 3; one byte on 4 to ask for the hidden inputs,
which come as a frame on 5 (only then, so nothing it printed or raised before can hold one).
Nothing goes through files: the grader reads only this pipe, with bounds. Before answering, the relay
empties the scratch folder (the sandbox's private /tmp); `JobAnswer.clean` false means it could not, and the grader
replaces this worker. Every process of the job has ended by then (the kernel ends a PID namespace with its
first process; without one, the template kills what the job left).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from dataclasses import replace

from ..fdio import frame, read_exactly, read_frame
from ..protocol import Ended, JobAnswer, JobRequest, Ready
from . import scratch as scratch_folder

MAX_HEADER = 64 * 1024


class _Job:
    """The relay's side of one running job: its pidfd, its pipes, what came back on them, and what it sends it:
    the job at once, the hidden inputs when the job asks (once), noting how much had been printed by then."""

    def __init__(self, pidfd: int, pipes: dict[str, int], job_message: bytes, hidden_frame: bytes,
                 bounds: dict[str, int]) -> None:
        self.pidfd = pidfd
        self.out, self.report, self.request = pipes["out"], pipes["report"], pipes["request"]
        self.pending = {pipes["job"]: memoryview(job_message), pipes["hidden"]: memoryview(hidden_frame)}
        self.hidden = pipes["hidden"]
        self.public_stdout: int | None = None
        self.bounds = {self.out: bounds["output"], self.report: bounds["report"]}
        self.data = {fd: bytearray() for fd in self.bounds}
        self.cut = dict.fromkeys(self.bounds, False)
        self.open = {self.out, self.report, self.request}
        for fd in (*self.open, *self.pending):
            os.set_blocking(fd, False)

    def writing(self) -> list[int]:
        """The pipes with something to send now: the job's, and the hidden inputs' once asked for."""
        return [fd for fd in self.pending if fd != self.hidden or self.public_stdout is not None]

    def read(self, fd: int) -> None:
        """What is there to read now on `fd` (EOF closes it)."""
        while fd in self.open:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                self.open.discard(fd)
                return
            if fd == self.request:
                self._asked()
                continue
            room = self.bounds[fd] - len(self.data[fd])
            self.data[fd] += chunk[:max(room, 0)]
            self.cut[fd] = self.cut[fd] or len(chunk) > room

    def printed_before_hidden(self) -> int:
        """How much of the output came before the hidden inputs reached the job: all of it if they never did."""
        return len(self.data[self.out]) if self.public_stdout is None else self.public_stdout

    def _asked(self) -> None:
        if self.public_stdout is None:
            self.read(self.out)  # all it printed before asking is in the pipe by now
            self.public_stdout = len(self.data[self.out])

    def send(self, fd: int) -> None:
        """Writes what the pipe takes; closes it when all is sent (or nobody reads)."""
        try:
            while self.pending[fd]:
                self.pending[fd] = self.pending[fd][os.write(fd, self.pending[fd][:1 << 16]):]
        except BlockingIOError:
            return
        except OSError:
            pass
        self.close_sending(fd)

    def close_sending(self, fd: int) -> None:
        if self.pending.pop(fd, None) is not None:
            os.close(fd)

    def close(self) -> None:
        for fd in list(self.pending):
            self.close_sending(fd)
        for fd in (self.out, self.report, self.request, self.pidfd):
            os.close(fd)


def _collect(job: _Job, timeout: float, control: socket.socket) -> tuple[Ended, int | None, str | None] | None:
    """Runs the job to its end: reads its pipes (each kept up to its bound, the rest read and dropped), sends it
    its job and, when asked, the hidden inputs, kills it at the deadline. Its status, from the template that
    reaped it; None if the template is gone."""
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            try:
                signal.pidfd_send_signal(job.pidfd, signal.SIGKILL)
            except ProcessLookupError:  # it ended just now
                pass
            break
        readable, writable, _ = select.select([job.pidfd, *job.open], job.writing(), [], left)
        for fd in readable:
            if fd != job.pidfd:
                job.read(fd)
        for fd in writable:
            job.send(fd)
        if job.pidfd in readable:
            break
    status = control.recv(8)  # sent once the template has reaped the job (and killed what it left)
    for fd in list(job.open):  # what the job wrote just before it ended
        job.read(fd)
    job.close()
    if len(status) != 4:
        return None
    status_word = int.from_bytes(status, sys.byteorder, signed=True)
    if timed_out:
        return "timed_out", None, None
    if os.WIFSIGNALED(status_word):
        return "signaled", None, signal.Signals(os.WTERMSIG(status_word)).name
    return "exited", os.WEXITSTATUS(status_word), None


def _fork_job(control: socket.socket) -> tuple[int, dict[str, int]] | None:
    """Has the template fork a job's process with fresh pipes: the job's pidfd and the relay's ends of the pipes
    (None if the template is gone)."""
    ours, theirs = {}, []
    for name, relay_reads in (("job", False), ("out", True), ("report", True), ("request", True), ("hidden", False)):
        r, w = os.pipe()
        ours[name], other = (r, w) if relay_reads else (w, r)
        theirs.append(other)
    try:
        socket.send_fds(control, [b"fork"], theirs)
        message, fds, _, _ = socket.recv_fds(control, 16, 1)
    except OSError:
        message, fds = b"", []
    finally:
        for fd in theirs:
            os.close(fd)
    if message != b"forked" or len(fds) != 1:
        for fd in [*fds, *ours.values()]:
            os.close(fd)
        return None
    return fds[0], ours


def _answer(reply: int, head: bytes, payloads: tuple[bytes, ...] = ()) -> None:
    data = head + b"\n" + b"".join(payloads)
    view = memoryview(data)
    while view:
        view = view[os.write(reply, view):]


def _run(request: JobRequest, job: bytes, hidden: bytes,
         control: socket.socket) -> tuple[JobAnswer, bytes, bytes] | None:
    """One job, start to end: the relay's answer to the grader (before the scratch folder is emptied: `clean`
    false), the report and the output; None if the template is gone (the grader then sees this worker end)."""
    forked = _fork_job(control)
    if forked is None:
        return None
    pidfd, pipes = forked
    message = frame(request.limits.encode()) + frame(bytes.fromhex(request.token)) + frame(job)
    running = _Job(pidfd, pipes, message, frame(hidden), {"output": request.output, "report": request.report})
    ended = _collect(running, float(request.timeout), control)
    if ended is None:
        return None
    status, code, sig = ended
    report, out = running.data[running.report], running.data[running.out]
    answer = JobAnswer(status=status, code=code, signal=sig, report=len(report),
                       report_cut=running.cut[running.report], stdout=len(out), stdout_cut=running.cut[running.out],
                       public_stdout=running.printed_before_hidden(), hidden_sent=running.public_stdout is not None,
                       clean=False)
    return answer, bytes(report), bytes(out)


def serve(control: socket.socket, scratch: str) -> None:
    """Relays until the grader closes stdin or the template ends."""
    from ..sandbox import python_paths

    reply = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # stray prints must not corrupt the protocol
    keep = tuple(p for p in python_paths() if p.startswith(scratch.rstrip(os.sep) + os.sep))
    hello = control.recv(MAX_HEADER)
    if not hello:
        return
    _answer(reply, Ready(ready=True, pid=os.getpid(), isolated=json.loads(hello)["isolated"]).encode())
    while True:
        head = read_frame(0, MAX_HEADER)
        request = JobRequest.decode(head) if head else None
        job = read_exactly(0, request.job) if request else None
        hidden = read_exactly(0, request.hidden) if request and job is not None else None
        if hidden is None:
            return
        assert request is not None and job is not None  # hidden is read only after them
        ran = _run(request, job, hidden, control)
        del job, hidden
        if ran is None:
            return
        answer, report, out = ran
        clean = scratch_folder.empty(scratch, keep)
        _answer(reply, replace(answer, clean=clean).encode(), (report, out))
