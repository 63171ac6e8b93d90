"""A warm worker: torch imported once, then one fork per job, so a job costs its own compute. Started inside
the sandbox (sandbox.py) as `python -I -m autograder.runner.worker.template SCRATCH [--drop-root] [--exercises ID,ID]
[--shared-namespaces]` (the exercises it grades, whose needs it warms: all by default), so no writable folder
is on `sys.path`.

It is three kinds of process, and the one that forks jobs never holds anything of one:
- the relay (relay.py), the process bubblewrap starts: it talks to the grader on stdin/stdout (the protocol
  is in relay.py), hands each job to that job's process through pipes, collects what comes back, and empties
  the scratch folder. It holds every job's data, and forks nothing after the template: no job is a copy of it.
- the template (this module): imports torch, warms up, takes the guard's snapshot, then, for each job,
  forks the job's process and passes on its exit status. It reads nothing of any job: it receives only the
  job's pipes (as descriptors, on a socket from the relay), so a job forked after another finds nothing of
  it in the memory it inherits. Each job's process is forked into a PID namespace and an IPC namespace of
  its own (isolation.py): it cannot name its template or relay (no signal, no trace, no prlimit), its shared
  memory ends with it, and when it ends the template ends its namespace, with every process it started.
- the job's process (job.py): enters a user namespace of its own, reads its job and token from its pipe,
  takes the limits, drops every capability, then runs answer.py under guard.py.

Where the kernel refuses those namespaces (no unprivileged user namespaces), or `--shared-namespaces` asks
for that (to test that case), jobs are forked in the worker's own namespaces and the ready line says
"isolated": false; the pool warns (see the README for what then does not hold).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path
from typing import NoReturn

from . import isolation, job

UNPRIVILEGED = 65534
"""The user a worker runs as where the sandbox starts as root ("nobody"): never root on the host."""
JOB_NAMESPACES = isolation.CLONE_NEWPID | isolation.CLONE_NEWIPC
M_ARENA_MAX = -8  # glibc's mallopt parameter


def one_malloc_arena() -> bool:
    """Every thread of this worker and its jobs allocates from one malloc arena. glibc gives each new
    thread an arena of its own, reserving 64 MB of address space for it; under a job's RLIMIT_AS (a
    platform bundle allows 128 MB beyond the worker) that reservation fails, and glibc tries again on
    every allocation: each step of the guard runs in a fresh thread, which made the RNN exercise's job
    25 times slower (2.4 s instead of 0.1 s). A job runs one thread at a time, so one arena costs nothing.
    True where glibc took it."""
    try:
        return ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1) == 1
    except (OSError, AttributeError):  # not glibc: nothing to set
        return False


def _drop_root() -> None:
    """Started by a grader that runs as root, the sandbox has no user namespace (one would map its user to
    root outside): become an unprivileged user before anything else runs. Irreversible, no capability kept."""
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(UNPRIVILEGED)
        os.setuid(UNPRIVILEGED)


def _own_pid() -> int:
    """This process's number in the /proc it sees (which may belong to an outer PID namespace)."""
    return int(os.readlink("/proc/self"))


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
    found, frontier = [], [_own_pid()]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _kill_leftovers() -> None:
    """Without a PID namespace per job: kill what the job left (the kernel does it where there is one)."""
    for _ in range(50):
        pids = _descendants()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.002)


class _Forker:
    """Forks a job's process, into namespaces of its own where `isolated`, and puts the template back in its own
    namespaces afterwards (unshare(CLONE_NEWPID) names the namespace of the next children only once).

    The first process of a PID namespace is its init: the kernel drops the signals it has no handler for, even
    its own raise(SIGSEGV), and ends every other process of the namespace when it ends. So a job is the second
    process of its namespace, after a `sleep` that the template spawns there (vfork and exec: nothing to copy)
    and kills once the job has ended, which ends whatever the job left."""

    def __init__(self, isolated: bool) -> None:
        self.isolated = isolated
        self.home = [(os.open(f"/proc/self/ns/{name}", os.O_RDONLY), kind) for name, kind in
                     (("pid", isolation.CLONE_NEWPID), ("ipc", isolation.CLONE_NEWIPC))] if isolated else []
        self.sleep = shutil.which("sleep", path="/usr/bin:/bin") or "/bin/sleep"
        self.init: int | None = None

    def fork(self) -> int:
        if self.isolated:
            isolation.unshare(JOB_NAMESPACES)
        try:
            if self.isolated:
                self.init = os.posix_spawn(self.sleep, [self.sleep, "2147483647"], {})
            pid = os.fork()
        except BaseException:
            self.end()
            self._home()
            raise
        if pid:
            self._home()
        return pid

    def end(self) -> None:
        """After the job's process has ended: ends its namespace, with every process left in it."""
        if self.init is not None:
            os.kill(self.init, signal.SIGKILL)
            os.waitpid(self.init, 0)
            self.init = None
        else:
            _kill_leftovers()

    def _home(self) -> None:
        for fd, kind in self.home:
            isolation.setns(fd, kind)


def _probe(forker: _Forker) -> bool:
    """Whether a job can be forked into namespaces of its own and enter a user namespace of its own there."""
    pid = forker.fork()
    if pid == 0:
        try:
            isolation.unshare(isolation.CLONE_NEWUSER)
            isolation.drop_privileges()
            os._exit(0 if isolation.capabilities() == 0 else 1)
        except BaseException:  # noqa: BLE001 - any failure means: no
            os._exit(1)
    status = isolation.wait_status(pid)
    forker.end()
    return os.WIFEXITED(status.value) and os.WEXITSTATUS(status.value) == 0


def _warm_up(exercise_ids: tuple[str, ...] | None) -> None:
    """Pays torch's first-call costs once, here, instead of in every job: autocast, torch.func, convolutions,
    recurrent layers and the culprit locator, and the lazily imported modules (spec.LAZY_MODULES) that the
    trials of the exercises this worker grades need (all exercises' where `exercise_ids` is None): dynamo,
    which an optimizer's first step imports, costs about a second. The modules they load are then under
    the snapshot the guard checks after every step; torch's own rebinding when a job imports dynamo later
    is accepted as exactly what it is (guard.TORCH_REBINDS). Nothing of any exercise's answer is here
    (there is none in the sandbox)."""
    import importlib

    import torch
    from torch import nn

    from ...blame import culprit_for
    from ...exercises import EXERCISES, get

    chosen = [get(e) for e in exercise_ids] if exercise_ids is not None else list(EXERCISES.values())
    preload = {module for exercise in chosen for module in exercise.preload}
    for module in sorted(preload):
        importlib.import_module(module)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(inplace=True), nn.Flatten(),
                        nn.Dropout(0.5), nn.Linear(8, 3))
    # an optimizer's step imports dynamo: stepped here only where dynamo is loaded anyway
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) if "torch._dynamo" in preload else None
    for dtype in (torch.float32, torch.float64):
        net.to(dtype)
        loss = net(torch.randn(2, 2, 2, 2, dtype=dtype)).logsumexp(1).sum()
        net.zero_grad()
        loss.backward()
        if optimizer is not None:
            optimizer.step()
    for cell in (nn.LSTM(3, 4, 2), nn.GRU(3, 4), nn.RNN(3, 4)):
        out, _ = cell(torch.randn(5, 2, 3))
        out.sum().backward()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        nn.functional.dropout(torch.ones(4, 4) @ torch.ones(4, 4), 0.2, training=True)
    torch.func.functional_call(net, dict(net.named_parameters()), (torch.randn(1, 2, 2, 2, dtype=torch.float64),))

    def broken() -> None:
        x = torch.randn(3, requires_grad=True)
        y = torch.relu(x)
        y += 1
        y.sum().backward()

    culprit_for(broken, None)


def template(control: socket.socket, scratch: str, exercise_ids: tuple[str, ...] | None, isolated: bool) -> NoReturn:
    """The template's life: warm up, say ready on `control`, then fork one job's process per request. Each
    request carries nothing but the job's pipes; the answer is the job's pidfd, then, once it has ended, its
    exit status."""
    isolation.prctl(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)  # the relay gone, the worker is gone
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the grader's pipes are the relay's
    os.dup2(null, 1)  # stray prints of imported code go nowhere
    one_malloc_arena()
    import torch  # noqa: F401 - the point of a warm worker: imported once, inherited by every job

    from ... import exercises  # noqa: F401 - every exercise's module, imported once here, not in each job
    from .. import wire  # noqa: F401
    from . import answer, guard  # noqa: F401

    torch.set_num_threads(1)
    _warm_up(exercise_ids)
    snapshot = guard.Snapshot()  # of the grader's modules as every job starts: what answer code may not change
    forker = _Forker(isolated)
    if isolated and not _probe(forker):
        forker = _Forker(False)
    if not forker.isolated:
        isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)  # the job's orphans come here, to be killed
    ctypes.CDLL(None).malloc_trim(0)  # fewer pages to copy at each fork
    control.send(json.dumps({"isolated": forker.isolated}).encode())
    while True:
        message, fds, _, _ = socket.recv_fds(control, 16, 5, socket.MSG_CMSG_CLOEXEC)
        if message != b"fork" or len(fds) != 5:
            os._exit(0)
        pid = forker.fork()
        if pid == 0:
            control.close()
            job.become_job(fds, snapshot, scratch, forker.isolated)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        socket.send_fds(control, [b"forked"], [pidfd])
        os.close(pidfd)
        status = isolation.wait_status(pid)
        forker.end()
        control.sendmsg([status])
        isolation.forget(status)


def _exercise_ids(argv: list[str]) -> tuple[str, ...] | None:
    """`--exercises a,b` among the options (the grader's own, checked before it started this worker)."""
    for i, arg in enumerate(argv[:-1]):
        if arg == "--exercises":
            return tuple(argv[i + 1].split(","))
    return None


def main(argv: list[str]) -> None:
    """The worker's start: become unprivileged, enter namespaces of its own where the kernel allows, start the
    template, and relay until the grader closes stdin."""
    from . import relay

    scratch = argv[0]
    if "--drop-root" in argv[1:]:
        _drop_root()
    isolation.prctl(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)  # a killed grader takes its workers with it
    isolation.prctl(isolation.PR_SET_DUMPABLE, 0)  # nobody of the same user may trace it or read its memory
    isolated = "--shared-namespaces" not in argv[1:]
    try:
        if isolated:
            isolation.unshare(isolation.CLONE_NEWUSER | JOB_NAMESPACES)  # the template: PID 1 of the new one
    except OSError:
        isolated = False
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        template(theirs, scratch, _exercise_ids(argv[1:]), isolated)
    theirs.close()
    if isolated:
        isolation.drop_privileges()  # the relay needs none: the template keeps those it forks jobs with
    relay.serve(ours, scratch)


if __name__ == "__main__":
    main(sys.argv[1:])
