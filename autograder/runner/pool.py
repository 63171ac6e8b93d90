"""A pool of warm, sandboxed workers: the fast, safe Runner for grading a class.

Each slot is one zygote (zygote.py) in its own bubblewrap sandbox, with torch already imported; a job
is a fork of it. The grader writes the job into the slot's folder (the only place the sandbox can
write), asks the zygote to run it, waits with a watchdog, and reads back the validated report. A slot
whose zygote dies (killed by a job, say) is replaced; the job that did it gets its own verdict.
"""

from __future__ import annotations

import json
import os
import queue
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

from . import Job, cgroup
from .limits import Limits
from .sandbox import SLOT_MOUNT, bwrap_command, bwrap_problem, plain_env
from .worker import READY

if TYPE_CHECKING:
    from ..outcome import RunReport

START_TIMEOUT = 120.0
"""Seconds a fresh zygote may take to import torch and say it is ready."""
WATCHDOG_GRACE = 15.0
"""Seconds past a job's timeout before the grader stops waiting for the zygote's answer."""


class PoolError(Exception):
    """The pool itself failed (a zygote would not start): the grader's fault, never a student's."""


class Slot:
    def __init__(self, index: int, base: Path, limits: Limits, sandboxed: bool, launcher: ThreadPoolExecutor):
        self.launcher = launcher
        self.index = index
        self.dir = base / f"slot-{index}"
        self.limits = limits
        self.sandboxed = sandboxed
        self.proc: subprocess.Popen | None = None
        self.ready = False
        self.cgroup = cgroup.make_pids_cgroup(f"{os.getpid()}-{index}", limits.processes)
        self.jobs = 0

    def start(self) -> None:
        self.launch()
        self.await_ready()

    def launch(self) -> None:
        """Starts the zygote without waiting for it (it imports torch: seconds)."""
        self.stop()
        self.dir.mkdir(parents=True, exist_ok=True)
        inner = [sys.executable, "-m", "autograder.runner.zygote", "/tmp" if self.sandboxed else ""]
        command = bwrap_command(self.dir, inner) if self.sandboxed else inner
        group = self.cgroup

        def preexec() -> None:
            os.setsid()
            if group is not None:
                cgroup.enter(group)

        # Started from the pool's one long-lived launcher thread: bwrap --die-with-parent (and the zygote's
        # own death signal) fire when the *thread* that started them ends, not only the process.
        self.proc = self.launcher.submit(
            subprocess.Popen, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=None if self.sandboxed else plain_env(self.dir), cwd=self.dir, preexec_fn=preexec,
        ).result()
        self.ready = False

    def await_ready(self) -> None:
        """Waits for the launched zygote to say it is ready; PoolError if it does not."""
        if self.ready:
            return
        hello = self._read_line(START_TIMEOUT) if self.proc is not None else None
        if not hello or not json.loads(hello).get("ready"):
            self.stop()
            raise PoolError(f"worker slot {self.index} did not start")
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

    def close(self) -> None:
        self.stop()
        if self.cgroup is not None:
            cgroup.remove(self.cgroup)

    def _read_line(self, timeout: float) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return line.decode() if line else None

    def run(self, job: Job) -> RunReport:
        from ..outcome import RunReport
        from .wire import WireError, read_report, write_job

        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.jobs += 1
        directory = self.dir / f"job-{self.jobs}"
        directory.mkdir()
        start = time.perf_counter()
        try:
            write_job(directory, job.exercise, job.code, job.trials, job.inputs)
            seen_as = f"{SLOT_MOUNT}/{directory.name}" if self.sandboxed else str(directory)
            request = {"dir": seen_as, "timeout": job.timeout, "memory": self.limits.memory,
                       "processes": self.limits.processes, "file_size": self.limits.file_size}
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
                line = self._read_line(job.timeout + WATCHDOG_GRACE)
            except (BrokenPipeError, OSError):
                line = None
            stdout = _head(directory / "stdout.txt", self.limits.output)
            seconds = time.perf_counter() - start
            if line is None:  # the zygote died or hung: a job killed it, or it was out of memory
                self.stop()
                return RunReport("crashed", "the worker running your code was killed (did your code kill its "
                                 "parent process, or use up all memory?)", stdout=stdout, seconds=seconds)
            answer = json.loads(line)
            if answer["status"] == "timed_out":
                return RunReport("timed_out", f"stopped after {job.timeout:g} s (an infinite loop?)", stdout=stdout,
                                 seconds=seconds)
            if not (directory / READY).exists():
                raise PoolError(f"the worker failed before running the submission: {stdout[-2000:]}")
            try:
                report = read_report(directory, job.trials)
            except WireError as e:
                return RunReport("crashed", _crash_detail(answer, str(e)), stdout=stdout, seconds=seconds)
            return RunReport(report.status, report.detail, report.load_error, report.problems, report.outcomes,
                             stdout, seconds)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def _head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", "replace")
    return text + ("\n[output cut]" if len(data) > limit else "")


def _crash_detail(answer: dict, why: str) -> str:
    if answer.get("signal"):
        meaning = {"SIGSEGV": "a segmentation fault", "SIGKILL": "being killed (out of memory?)",
                   "SIGXCPU": "the CPU-time limit", "SIGXFSZ": "the file-size limit (too much output?)",
                   "SIGABRT": "an abort"}.get(answer["signal"], answer["signal"])
        return f"the process ended by {meaning} before reporting"
    return f"the process exited with status {answer.get('code')} before reporting ({why})"


class WarmPool:
    """Runner: `slots` warm workers, sandboxed where bubblewrap works. Use as a context manager.

    With `wait=False` the workers are launched and the constructor returns at once: the caller goes on
    with its own work (importing torch, making references) while they start; `ready()`, or the first
    `run()`, waits for them.
    """

    def __init__(self, slots: int, limits: Limits | None = None, sandbox: bool | None = None, wait: bool = True):
        limits = limits or Limits()
        problem = bwrap_problem() if sandbox is not False else "sandbox turned off"
        if sandbox is True and problem:
            raise PoolError(f"cannot sandbox: {problem}")
        self.sandboxed = problem is None
        self.warning = None if self.sandboxed else (
            f"NOT SANDBOXED: {problem}. Submissions run as plain processes under rlimits only: they can read "
            "your files and reach the network. Install bubblewrap to grade untrusted code.")
        self.limits = limits
        self._base = Path(tempfile.mkdtemp(prefix="autograder-pool-"))
        os.chmod(self._base, 0o700)
        self._launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autograder-launcher")
        self._slots = [Slot(i, self._base, limits, self.sandboxed, self._launcher) for i in range(max(1, slots))]
        self._free: queue.Queue[Slot] = queue.Queue()
        self._ready = threading.Lock()
        self._started = False
        try:
            for s in self._slots:
                s.launch()
        except OSError as e:
            self.close()
            raise PoolError(f"a worker slot could not be launched: {e}") from e
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
        shutil.rmtree(self._base, ignore_errors=True)

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
