"""A job's process, from its fork to the worker: it takes the job's pipes, enters a user namespace of its own,
reads its job and token from the relay, takes the job's limits, drops every privilege, and runs answer.py in a
fresh folder. Forked by the template (template.py), which never saw the job."""

from __future__ import annotations

import io
import os
import resource
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from ..fdio import read_frame
from ..protocol import TOKEN_BYTES, JobLimits
from . import isolation

MAX_LIMITS = 4096
MAX_JOB = 1 << 31
JOB_TASKS = 2
"""Where no cgroup bounds a job's memory and processes: the tasks a job may have (RLIMIT_NPROC, counted in
its own user namespace): its main thread and the guard's answer thread. No third, so it cannot fork, and its
memory is its one process's RLIMIT_AS."""


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _place(fds: dict[int, int]) -> None:
    """Puts each source descriptor at its target number (whatever numbers they had)."""
    import fcntl

    high = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in fds.items()}
    for target, source in high.items():
        os.dup2(source, target)


def _limit(limits: JobLimits, own_user: bool) -> None:
    """The job's rlimits. Its processes count against RLIMIT_NPROC in its own user namespace only: where no
    cgroup bounds it (`processes` is not None), it gets JOB_TASKS, so it cannot fork."""
    processes = limits.processes
    tasks = None if processes is None else JOB_TASKS if own_user else processes
    for limit, value in (
        (resource.RLIMIT_AS, _vm_size() + limits.memory),
        (resource.RLIMIT_CPU, int(limits.timeout) + 1),
        (resource.RLIMIT_FSIZE, limits.file_size),
        (resource.RLIMIT_NPROC, tasks),
        (resource.RLIMIT_CORE, 0),
    ):
        if value is None:
            continue
        hard = resource.getrlimit(limit)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)  # no raising without privilege
        resource.setrlimit(limit, (value, value))


def _first_to_go() -> None:
    """Where memory runs out in the slot's cgroup, the kernel kills the job's processes before the worker's."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def become_job(fds: Sequence[int], snapshot, scratch: str, isolated: bool) -> NoReturn:
    """In the forked child: take the job's pipes, isolate, read the job, apply the limits, drop every
    privilege, run the worker. Never returns. `fds`: the job's ends of its pipes, as the relay sent them (the
    job, its output, its report, its request for the hidden inputs, the hidden inputs)."""
    code = 70
    try:
        os.setsid()
        job, out, report, request, hidden = fds
        _place({0: os.open(os.devnull, os.O_RDONLY), 1: out, 2: out, 3: report, 4: request, 5: hidden, 6: job})
        os.closerange(7, 65536)  # the template's socket and namespaces among them
        isolation.prctl(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)
        if isolated:
            isolation.unshare(isolation.CLONE_NEWUSER)
        limits, token, payload = (read_frame(6, size) for size in (MAX_LIMITS, TOKEN_BYTES, MAX_JOB))
        os.close(6)
        if limits is None or token is None or payload is None:
            os._exit(code)
        for fd, name in ((1, "stdout"), (2, "stderr")):  # unbuffered: the job ends with os._exit, unflushed
            raw = io.FileIO(fd, "w", closefd=False)
            setattr(sys, name, io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True))
        _limit(JobLimits.decode(limits), isolated)
        isolation.drop_privileges()
        _first_to_go()
        directory = tempfile.mkdtemp(prefix="job-", dir=scratch)  # fresh and unguessable, in the emptied scratch
        os.chdir(directory)
        os.environ["HOME"] = os.environ["TMPDIR"] = tempfile.tempdir = directory
        from .answer import main
        from .guard import Fds

        main(payload, token, Fds(report=3, request=4, hidden=5), snapshot)
    except BaseException:  # noqa: BLE001 - anything escaping the worker is reported by the exit status
        import traceback

        traceback.print_exc()
    os._exit(code)
