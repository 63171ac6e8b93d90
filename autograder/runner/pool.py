"""A pool of warm, sandboxed workers: the fast, safe Runner for grading a class.

Each slot is one warm worker (template.py: its relay and its template) in its own bubblewrap sandbox, with torch
already imported; a job is a fork of its template, which never held a job. The grader sends the job down the
relay's stdin with a fresh random token (protocol.py), waits with a watchdog, and reads back, with bounds, the
report that the job signed with that token (guard.py) and what it printed. No file of the sandbox is ever
read. A slot whose worker dies, or that a job left dirty, is replaced by a fresh one; the job that did it gets
its own verdict. Where the grader may make cgroups (as root), a slot's cgroup bounds its processes and its
memory: once the worker is warm, it may grow by a job's memory and no more, whatever the job's processes.
"""

from __future__ import annotations

import hmac
import os
import queue
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.status import Status
from ..feedback.wording import say
from . import Job, cgroup
from .fdio import frame, split_frame
from .limits import Limits
from .protocol import JobAnswer, JobRequest, ProtocolError, Ready
from .sandbox import SCRATCH, as_root, bwrap_command, bwrap_problem, plain_env

if TYPE_CHECKING:
    from ..core.outcome import RunReport

START_TIMEOUT = 120.0
"""Seconds a fresh worker may take to import torch and its relay say it is ready."""
WORKER_COPY = 128 * 1024**2
"""Bytes of its warm worker's memory a job may copy, beyond the job's own memory limit: a job shares the
template's pages until it writes to one (Python writes to every object it touches), and the copy counts in the
slot's cgroup. The cgroup allows what the warm worker uses, plus this, plus the job's memory. An honest job
of any exercise copies 12 to 24 MiB (measured on the solutions, torch 2.13)."""
WORKER_OPTIONS: list[str] = []
"""More options for every worker (template.py's); the tests set `--shared-namespaces` here."""
WATCHDOG_GRACE = 15.0
"""Seconds past a job's timeout before the grader stops waiting for the worker's answer."""


class PoolError(Exception):
    """The pool itself failed (a worker would not start): the grader's fault, never a student's."""


class _Channel:
    """The relay's stdout, read with our own buffer, a bound and a deadline: nothing it sends can make the
    grader wait forever or read without end."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def _fill(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            return False
        try:
            data = os.read(self.fd, 1 << 20)
        except OSError:
            return False
        self.buffer += data
        return bool(data)

    def line(self, timeout: float, limit: int = 64 * 1024) -> bytes | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if len(self.buffer) > limit or not self._fill(deadline):
                return None
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line if len(line) <= limit else None

    def exact(self, n: int, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while len(self.buffer) < n:
            if not self._fill(deadline):
                return None
        data, self.buffer = bytes(self.buffer[:n]), bytearray(self.buffer[n:])
        return data


class Slot:
    def __init__(self, index: int, limits: Limits, sandboxed: bool, launcher: ThreadPoolExecutor,
                 run_as: tuple[int, int] | None = None, exercises: tuple[str, ...] | None = None):
        self.launcher = launcher
        self.exercises = exercises  # what its worker warms for (None: every exercise)
        self.run_as = run_as  # unsandboxed only: the (uid, gid) the worker drops to
        self.index = index
        self.limits = limits
        self.sandboxed = sandboxed
        self.proc: subprocess.Popen | None = None
        self.channel: _Channel | None = None
        self.scratch: str | None = None  # unsandboxed only: the worker's /tmp, a fresh folder per start
        self.ready = False
        self.isolated = False  # whether each job gets namespaces of its own (the worker says so when ready)
        self.cgroup = cgroup.make(f"{os.getpid()}-{index}", limits.processes)
        self.memory_bounded = False  # whether the slot's cgroup bounds a job's memory, all its processes together

    def start(self) -> None:
        self.launch()
        self.await_ready()

    def launch(self) -> None:
        """Starts a fresh worker without waiting for it (it imports torch: seconds). Isolated (`-I`: no
        writable folder on its sys.path), in a read-only working folder, with nothing of an earlier one."""
        self.stop()
        if self.cgroup is not None:
            self.cgroup.unbound_memory()  # until the fresh worker is warm: its baseline is measured then
        options = ["--exercises", ",".join(self.exercises)] if self.exercises is not None else []
        options += WORKER_OPTIONS
        if self.sandboxed:
            inner = [sys.executable, "-I", "-B", "-m", "autograder.runner.worker.template", SCRATCH]
            command = bwrap_command(inner + (["--drop-root"] if as_root() else []) + options, self.limits.scratch)
            env = None
        else:
            self.scratch = tempfile.mkdtemp(prefix=f"autograder-slot-{self.index}-")
            if self.run_as is not None:
                os.chown(self.scratch, *self.run_as)
            command = [sys.executable, "-I", "-B", "-m", "autograder.runner.worker.template", self.scratch, *options]
            env = plain_env(Path(self.scratch))
        group, run_as = self.cgroup, self.run_as

        def preexec() -> None:
            os.setsid()
            if group is not None:
                group.enter()
            if run_as is not None:  # for good: no way back to the grader's user
                os.setgroups([])
                os.setgid(run_as[1])
                os.setuid(run_as[0])

        # Started from the pool's one long-lived launcher thread: bwrap --die-with-parent (and the relay's
        # own death signal) fire when the *thread* that started them ends, not only the process.
        self.proc = self.launcher.submit(
            subprocess.Popen, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd="/", preexec_fn=preexec,
        ).result()
        assert self.proc.stdout is not None  # stdout=PIPE
        self.channel = _Channel(self.proc.stdout.fileno())
        self.ready = False

    def await_ready(self) -> None:
        """Waits for the launched worker to say it is ready, then bounds the slot's memory from there; PoolError
        if it does not."""
        if self.ready:
            return
        hello = self.channel.line(START_TIMEOUT) if self.channel is not None else None
        try:
            said = Ready.decode(hello)
        except ProtocolError:
            self.stop()
            raise PoolError(say("run: slot did not start", slot=self.index)) from None
        self.isolated = said.isolated
        if self.cgroup is not None:
            self.memory_bounded = self.cgroup.bound_memory(self.limits.memory + WORKER_COPY)
        self.ready = True

    def stop(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream:
                    stream.close()
            self.proc = None
            self.channel = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def close(self) -> None:
        self.stop()
        if self.cgroup is not None:
            self.cgroup.remove()

    def _exchange(self, job: Job, token: str) -> tuple[JobAnswer, bytes, bytes] | None:
        """Sends the job; the relay's answer, the report and the printed output, or None if the worker died, hung
        or answered out of protocol."""
        from .wire import encode_inputs, encode_job

        payload = encode_job(job.exercise, job.code, job.trials, job.inputs, job.hidden)
        hidden = encode_inputs({k: v for k, v in job.inputs.items() if k in job.hidden}) if job.hidden else b""
        limits = self.limits
        # Where the slot's cgroup bounds the job's processes and memory, RLIMIT_NPROC is not needed (None);
        # otherwise the worker keeps the job from forking, where it can (job.JOB_TASKS).
        request = JobRequest(job=len(payload), hidden=len(hidden), token=token, timeout=job.timeout,
                             memory=limits.memory, processes=None if self.memory_bounded else limits.processes,
                             file_size=limits.file_size, output=limits.output, report=limits.report)
        # run() starts the worker first
        assert self.proc is not None and self.proc.stdin is not None and self.channel is not None
        try:
            self.proc.stdin.write(frame(request.encode()) + payload + hidden)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        line = self.channel.line(job.timeout + WATCHDOG_GRACE)
        try:
            answer = JobAnswer.decode(line).within(report=limits.report, stdout=limits.output)
        except ProtocolError:  # None (it died or hung), or not an answer: either way, this worker is done
            return None
        body = self.channel.exact(answer.report + answer.stdout, WATCHDOG_GRACE)
        if body is None:
            return None
        return answer, body[:answer.report], body[answer.report:]

    def run(self, job: Job) -> RunReport:
        from dataclasses import replace

        from ..core.outcome import RunReport

        if self.proc is None or self.proc.poll() is not None:
            self.start()
        token = secrets.token_bytes(32)
        start = time.perf_counter()
        exchanged = self._exchange(job, token.hex())
        seconds = time.perf_counter() - start
        if exchanged is None:  # the worker died or hung (out of memory, say)
            self.stop()
            return RunReport(status=Status.CRASHED, seconds=seconds, detail=say("run: worker killed"))
        answer, signed, printed = exchanged
        if not answer.clean:  # a job left what the relay could not remove: start afresh
            self.stop()
        stdout = printed.decode("utf-8", "replace") + ("\n[output cut]" if answer.stdout_cut else "")
        public = printed[:answer.public_stdout].decode("utf-8", "replace")
        report = _verdict(answer, signed, token, job)
        tampered = report.load_error is not None and report.load_error.type == "TamperError"
        return replace(report, stdout=stdout, seconds=seconds, public_stdout=None if tampered else public)


def _verdict(answer: JobAnswer, signed: bytes, token: bytes, job: Job) -> RunReport:
    """What the job's run comes to: its own report where it sent one, signed with its token; else why not."""
    from ..core.outcome import RunReport
    from .wire import WireError

    if answer.status == "timed_out":
        return RunReport(status=Status.TIMED_OUT, detail=say("stopped after", seconds=job.timeout))
    if answer.report_cut:
        return RunReport(status=Status.CRASHED, detail=say("run: observations too large"))
    if not signed:
        return RunReport(status=Status.CRASHED, detail=_crash_detail(answer, None))
    if not hmac.compare_digest(signed[:len(token)], token):
        return RunReport(status=Status.CRASHED, detail=say("run: forged report"), forged=True)
    try:
        return _decode(signed[len(token):], job)
    except WireError as e:
        return RunReport(status=Status.CRASHED, detail=_crash_detail(answer, str(e)))


def _decode(data: bytes, job: Job) -> RunReport:
    """The worker's report: one frame, or the public phase's and the hidden phase's, each holding only its
    own trials (the public one was sealed before the hidden inputs reached the worker)."""
    from ..core.outcome import RunReport
    from .wire import WireError, decode_report

    split = split_frame(data)
    if split is None or not split[0]:
        raise WireError("the worker's report is cut short")
    first, rest = split
    if not rest:
        return decode_report(first, job.trials)
    public_trials, hidden_trials = job.phases()
    public, hidden = decode_report(first, public_trials), decode_report(rest, hidden_trials)
    if hidden.load_error is not None or hidden.problems:  # only the guard's tamper report carries these
        return hidden
    return RunReport(load_error=public.load_error, problems=public.problems,
                     outcomes={**public.outcomes, **hidden.outcomes})


def _crash_detail(answer: JobAnswer, broken: str | None) -> str:
    """Why the job ended without a report (`broken`: why the one it sent is not one). After the hidden inputs
    reached it, in words that do not depend on anything it chose (an exit status, a signal), since those could
    carry a hidden input."""
    if answer.hidden_sent:
        return say("run: ended after hidden inputs")
    if answer.signal is not None:
        by_signal = {"SIGSEGV": lambda: say("run: ended by SIGSEGV"), "SIGKILL": lambda: say("run: ended by SIGKILL"),
                     "SIGXCPU": lambda: say("run: ended by SIGXCPU"), "SIGXFSZ": lambda: say("run: ended by SIGXFSZ"),
                     "SIGABRT": lambda: say("run: ended by SIGABRT")}
        return by_signal.get(answer.signal, lambda: say("run: ended by signal", signal=answer.signal))()
    code = answer.code if answer.code is not None else "?"
    if broken is None:
        return say("run: exited without report", code=code)
    return say("run: exited with broken report", code=code, why=broken)


def _user(name: str) -> tuple[int, int]:
    """The (uid, gid) of a user name (or a numeric uid); PoolError if there is none, or it is root."""
    import pwd

    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except (KeyError, ValueError):
        raise PoolError(say("run: no such user", user=name)) from None
    if entry.pw_uid == 0:
        raise PoolError(say("run: not as root"))
    if os.geteuid() != 0:
        raise PoolError(say("run: only root runs as another user", user=name))
    return entry.pw_uid, entry.pw_gid


class WarmPool:
    """Runner: `slots` warm workers, sandboxed where bubblewrap works. Use as a context manager.

    Where bubblewrap cannot run, `run_as` (a user name; the grader must be root) is the fallback that keeps
    the grader's files out of reach: the plain workers drop to that user before they start.

    With `wait=False` the workers are launched and the constructor returns at once: the caller goes on
    with its own work (importing torch, making references) while they start; `ready()`, or the first
    `run()`, waits for them.

    `exercises`: the only exercises it will grade, where the caller knows them (a platform's bundle, `check`):
    the workers then warm only what those need (spec.LAZY_MODULES), and start up to a second sooner. Any
    exercise is still graded correctly; one it was not warmed for may take that second in its job.
    """

    def __init__(self, slots: int, limits: Limits | None = None, sandbox: bool | None = None, wait: bool = True,
                 run_as: str | None = None, exercises: tuple[str, ...] | None = None):
        limits = limits or Limits()
        problem = bwrap_problem() if sandbox is not False else say("run: sandbox turned off")
        if sandbox is True and problem:
            raise PoolError(say("run: cannot sandbox", problem=problem))
        self.sandboxed = problem is None
        user = None if self.sandboxed or run_as is None else _user(run_as)
        self.warning = None if self.sandboxed else (
            say("run: not sandboxed as user", problem=problem, user=run_as) if user else
            say("run: not sandboxed", problem=problem))
        self.limits = limits
        self._launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autograder-launcher")
        self._slots = [Slot(i, limits, self.sandboxed, self._launcher, user, exercises) for i in range(max(1, slots))]
        self._free: queue.Queue[Slot] = queue.Queue()
        self._ready = threading.Lock()
        self._started = False
        try:
            for s in self._slots:
                s.launch()
        except OSError as e:
            self.close()
            raise PoolError(
                say("run: slot not launched as user", error=e, user=run_as, python=sys.executable)
                if run_as and isinstance(e, PermissionError) else say("run: slot not launched", error=e)) from e
        if wait:
            self.ready()

    def ready(self) -> None:
        """Waits until every worker has started (in parallel); PoolError, with the pool closed, if one
        did not."""
        with self._ready:
            if self._started:
                return
            failures: list[PoolError] = []

            def wait_for(slot: Slot) -> None:
                try:
                    slot.await_ready()
                except PoolError as e:
                    failures.append(e)

            threads = [threading.Thread(target=wait_for, args=(s,)) for s in self._slots]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if failures:
                self.close()
                raise failures[0]
            for s in self._slots:
                self._free.put(s)
            self._started = True
            if not all(s.isolated for s in self._slots):
                self.warning = say("run: also not isolated", warning=self.warning) if self.warning else \
                    say("run: not isolated")

    def run(self, job: Job) -> RunReport:
        self.ready()
        slot = self._free.get()
        try:
            return slot.run(job)
        finally:
            self._free.put(slot)

    def close(self) -> None:
        for s in self._slots:
            s.close()
        self._launcher.shutdown()

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
