"""A warm worker: imports torch once, then forks one child per job, so a job costs its own compute.

Protocol on stdin/stdout, one JSON object per line. In: {"dir": JOB_DIR, "timeout": s, "memory": bytes,
"processes": n, "file_size": bytes}. Out: {"dir": ..., "status": "exited"|"signaled"|"timed_out",
"code": int|None, "signal": str|None, "seconds": s}. Before answering, the zygote kills every process
the job left behind (it is their subreaper) and empties /tmp, so nothing of a job reaches the next one.
It runs inside the sandbox (see sandbox.py); the child runs the ordinary worker on the job folder.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _run_child(job: dict, reply_fd: int) -> None:
    """In the forked child: cut ties with the zygote, apply the limits, run the worker, exit."""
    try:
        os.setsid()
        directory = job["dir"]
        out = os.open(os.path.join(directory, "stdout.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.closerange(3, 1024)  # the zygote's pipes among them
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
        vm = _vm_size()
        for limit, value in (
            (resource.RLIMIT_AS, vm + int(job["memory"])),
            (resource.RLIMIT_CPU, int(job["timeout"]) + 1),
            (resource.RLIMIT_FSIZE, int(job["file_size"])),
            (resource.RLIMIT_NPROC, int(job["processes"])),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))
        os.chdir(directory)
        os.environ["HOME"] = os.environ["TMPDIR"] = directory
        from .worker import main

        code = main([directory])
    except BaseException:  # noqa: BLE001 - anything escaping the worker is reported by the exit status
        import traceback

        traceback.print_exc()
        code = 70
    os._exit(code)


def _descendants() -> list[int]:
    """Every live process below this one (orphans of a job are re-parented here: we are the subreaper)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    me = os.getpid()
    found, frontier = [], [me]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _kill_leftovers() -> None:
    for _ in range(50):
        pids = _descendants()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()
        time.sleep(0.002)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _empty(directory: str, keep: tuple[str, ...] = ()) -> None:
    """Removes what a job left in a shared scratch folder (the sandbox's private /tmp), except the paths
    in `keep` and the folders on the way to them (Python itself, when it lives under /tmp)."""
    import shutil

    for entry in os.scandir(directory):
        try:
            if entry.path in keep:
                continue
            if any(k.startswith(entry.path + os.sep) for k in keep):
                _empty(entry.path, keep)
            elif entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _wait(pid: int, timeout: float) -> tuple[str, int | None, str | None]:
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        os.killpg(pid, signal.SIGKILL) if _alive(pid) else None
        os.waitpid(pid, 0)
        return "timed_out", None, None
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "signaled", None, signal.Signals(os.WTERMSIG(status)).name
    return "exited", os.WEXITSTATUS(status), None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _warm_up() -> None:
    """Runs every exercise's public scenarios on the reference once, so that torch's lazy imports
    (optim and dynamo, func, autocast) and first-call costs are paid here, once, not by every job."""
    from .. import trials
    from ..exercises import EXERCISES
    from ..harness import run_reference, settle_torch

    settle_torch()
    for exercise in EXERCISES.values():
        planned = trials.plan(exercise, ("cpu",), public_only=True)
        run_reference(exercise, planned, trials.draw(exercise, planned, 0))


def serve(scratch: str | None) -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a killed grader takes its workers with it
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_DUMPABLE, 0)  # a job (same user) may not ptrace us or read our memory
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # stray prints of imported code must not corrupt the protocol

    import torch  # noqa: F401 - the point of a warm worker: imported once, inherited by every job

    from . import wire, worker  # noqa: F401
    from .sandbox import python_paths

    torch.set_num_threads(1)
    _warm_up()
    keep = tuple(p for p in python_paths() if scratch and p.startswith(scratch.rstrip(os.sep) + os.sep))
    reply.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            _run_child(job, reply.fileno())
        status, code, sig = _wait(pid, float(job["timeout"]))
        _kill_leftovers()
        if scratch:
            _empty(scratch, keep)
        reply.write(json.dumps({"dir": job["dir"], "status": status, "code": code, "signal": sig,
                                "seconds": time.perf_counter() - start}) + "\n")


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 else None)
