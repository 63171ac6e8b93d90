"""Runs each submission in a fresh Python process with a wall-clock timeout and resource limits.

The process group is killed at the end whatever happened, so nothing a submission started outlives
its grading. Issue "Grade untrusted code safely and fast" replaces this with a sandbox and warm pool
behind the same `run(job)`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..outcome import RunReport
from . import Job
from .wire import WireError, read_report, write_job
from .worker import READY

OUTPUT_LIMIT = 64 * 1024
"""Bytes of a submission's printed output kept (the rest is cut) so results stay small."""
FILE_SIZE_LIMIT = 256 * 1024 * 1024
"""Largest file a worker may write (its observations included)."""


class WorkerFailure(Exception):
    """The worker broke before the submission ran: a grader fault, never a student's zero."""


def _limits(cpu_seconds: int) -> None:  # runs in the child before exec
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class SubprocessRunner:
    def __init__(self, threads_per_worker: int = 1):
        self.threads = threads_per_worker

    def run(self, job: Job) -> RunReport:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="autograder-job-") as tmp:
            directory = Path(tmp)
            write_job(directory, job.exercise, job.code, job.trials, job.inputs)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": tmp,
                "TMPDIR": tmp,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONUNBUFFERED": "1",  # what it printed survives a crash or os._exit
                "PYTHONHASHSEED": "0",
                "OMP_NUM_THREADS": str(self.threads),
                "MKL_NUM_THREADS": str(self.threads),
            }
            out_path = directory / "stdout.txt"
            with open(out_path, "wb") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "autograder.runner.worker", tmp],
                    cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True, preexec_fn=lambda: _limits(int(job.timeout) + 1),
                )
                try:
                    returncode = proc.wait(timeout=job.timeout)
                    timed_out = False
                except subprocess.TimeoutExpired:
                    timed_out = True
                    returncode = None
                finally:
                    _kill_group(proc.pid)
                    proc.wait()
            with open(out_path, "rb") as f:
                stdout = f.read(OUTPUT_LIMIT).decode("utf-8", "replace")
            seconds = time.perf_counter() - start
            if timed_out:
                return RunReport("timed_out", f"stopped after {job.timeout:g} s (an infinite loop?)",
                                 stdout=stdout, seconds=seconds)
            if not (directory / READY).exists():
                raise WorkerFailure(f"the worker failed before running the submission: {stdout[-2000:]}")
            try:
                report = read_report(directory, job.trials)
            except WireError as e:
                return RunReport("crashed", _crash_detail(returncode, str(e)), stdout=stdout, seconds=seconds)
            return RunReport(report.status, report.detail, report.load_error, report.problems, report.outcomes,
                             stdout, seconds)


def _crash_detail(returncode: int | None, why: str) -> str:
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name
        meaning = {"SIGSEGV": "a segmentation fault", "SIGKILL": "killed (out of memory or CPU time?)",
                   "SIGXCPU": "the CPU-time limit", "SIGXFSZ": "the file-size limit"}.get(name, name)
        return f"the process ended by {meaning} before reporting"
    return f"the process exited with status {returncode} before reporting ({why})"
