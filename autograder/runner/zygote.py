"""A warm worker: imports torch once, then forks one child per job, so a job costs its own compute.

It runs inside the sandbox (sandbox.py), started as `python -I -m autograder.runner.zygote SCRATCH
[--drop-root] [--exercises ID,ID]` (the exercises it grades, whose needs it warms: all by default), so no
writable folder is on its `sys.path`; its working folder is read-only. Protocol, on stdin/stdout:
- in: the length of a JSON header (8 bytes, little-endian), the header {"job": n, "hidden": h, "token":
  hex, "timeout": s, "memory": bytes, "processes": n, "file_size": bytes, "output": bytes, "report": bytes},
  the n bytes of the job (wire.encode_job), then the h bytes of its hidden inputs (wire.encode_inputs).
  Every read takes exactly what it needs, so the hidden inputs are read only after the fork: the job's
  process never holds them until it asks, once its public phase is over;
- out: one JSON line {"status": "exited"|"signaled"|"timed_out", "code", "signal", "report": n,
  "report_cut", "stdout": m, "stdout_cut", "public_stdout": k or null, "clean"}, then the n bytes the job
  sent on its report pipe and the m bytes it printed, of which the first k were printed before it asked
  for the hidden inputs.
Nothing goes through files: the grader reads only this pipe, with bounds. Before answering, the zygote
kills every process the job left (it is their subreaper) and empties the scratch folder (the sandbox's
private /tmp); "clean": false means it could not, and the grader replaces this worker.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import resource
import select
import signal
import sys
import tempfile
import time
from pathlib import Path

from .fdio import read_exactly

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
UNPRIVILEGED = 65534
"""The user a job runs as where the sandbox starts as root ("nobody"): never root on the host."""
MAX_HEADER = 64 * 1024


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


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


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


class _Input:
    """Reads the grader's requests from fd 0, never a byte more than asked (no read-ahead: the hidden
    inputs stay in the pipe until the job that may get them has been forked)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def exact(self, n: int) -> bytes | None:
        return read_exactly(self.fd, n)

    def request(self) -> dict | None:
        head = self.exact(8)
        size = int.from_bytes(head, "little") if head else 0
        text = self.exact(size) if 0 < size <= MAX_HEADER else None
        return json.loads(text) if text else None


def _place(fds: dict[int, int]) -> None:
    """Puts each source descriptor at its target number (whatever numbers os.pipe gave them)."""
    import fcntl

    high = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in fds.items()}
    for target, source in high.items():
        os.dup2(source, target)


def _run_child(request: dict, job: bytes, pipes: dict[int, int], scratch: str, snapshot) -> None:
    """In the forked child: cut ties with the zygote, apply the limits, run the worker. Never returns.
    `pipes`: its ends of the job's pipes, by the descriptor they become (1 and 2 output, 3 report, 4 the
    request for the hidden inputs, 5 the hidden inputs)."""
    code = 70
    try:
        os.setsid()
        token = bytes.fromhex(request.pop("token"))
        _place({0: os.open(os.devnull, os.O_RDONLY), **pipes})
        os.closerange(6, 65536)  # the zygote's own pipes among them
        for fd, name in ((1, "stdout"), (2, "stderr")):  # unbuffered: the job ends with os._exit, unflushed
            raw = io.FileIO(fd, "w", closefd=False)
            setattr(sys, name, io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True))
        vm = _vm_size()
        for limit, value in (
            (resource.RLIMIT_AS, vm + int(request["memory"])),
            (resource.RLIMIT_CPU, int(request["timeout"]) + 1),
            (resource.RLIMIT_FSIZE, int(request["file_size"])),
            (resource.RLIMIT_NPROC, int(request["processes"])),
            (resource.RLIMIT_CORE, 0),
        ):
            hard = resource.getrlimit(limit)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)  # no raising without privilege
            resource.setrlimit(limit, (value, value))
        directory = tempfile.mkdtemp(prefix="job-", dir=scratch)  # fresh and unguessable, in the emptied scratch
        os.chdir(directory)
        os.environ["HOME"] = os.environ["TMPDIR"] = tempfile.tempdir = directory
        from .guard import Fds
        from .worker import main

        main(job, token, Fds(report=3, request=4, hidden=5), snapshot)
    except BaseException:  # noqa: BLE001 - anything escaping the worker is reported by the exit status
        import traceback

        traceback.print_exc()
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


def _remove(path: str) -> None:
    """Removes a file or a whole tree that a job made, whatever modes it set, without following links."""
    import shutil

    def writable_then_retry(function, name, _exc) -> None:
        os.chmod(os.path.dirname(name), 0o700)
        if os.path.isdir(name) and not os.path.islink(name):
            os.chmod(name, 0o700)
        function(name)

    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        shutil.rmtree(path, onerror=writable_then_retry)
    else:
        os.unlink(path)


def _empty(directory: str, keep: tuple[str, ...] = ()) -> bool:
    """Removes what a job left in the scratch folder (the sandbox's private /tmp), except the paths in `keep`
    and the folders on the way to them (Python itself, when it lives under /tmp). False if something stayed."""
    clean = True
    for entry in os.scandir(directory):
        try:
            if entry.path in keep:
                continue
            if any(k.startswith(entry.path + os.sep) for k in keep):
                clean = _empty(entry.path, keep) and clean
            else:
                _remove(entry.path)
        except (OSError, RecursionError):
            clean = False
    return clean


class _Job:
    """The zygote's side of one running job: its pipes, what came back on them, and the hidden inputs it
    hands over when the job asks (once), noting how much had been printed by then."""

    def __init__(self, pid: int, out: int, report: int, request: int, hidden: int, hidden_frame: bytes,
                 bounds: dict[int, int]) -> None:
        self.pid, self.out, self.report, self.request = pid, out, report, request
        self.hidden: int | None = hidden
        self.pending = memoryview(len(hidden_frame).to_bytes(8, "little") + hidden_frame)
        self.sending = False
        self.public_stdout: int | None = None
        self.bounds = bounds
        self.data = {fd: bytearray() for fd in bounds}
        self.cut = dict.fromkeys(bounds, False)
        self.open = {out, report, request}
        for fd in (out, report, request, hidden):
            os.set_blocking(fd, False)

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
            self.sending = True

    def send(self) -> None:
        """Writes what the pipe takes of the hidden inputs; closes it when all is sent (or nobody reads)."""
        try:
            while self.pending:
                self.pending = self.pending[os.write(self.hidden, self.pending[:1 << 16]):]
        except BlockingIOError:
            return
        except OSError:
            pass
        self.close_hidden()

    def close_hidden(self) -> None:
        if self.hidden is not None:
            os.close(self.hidden)
            self.hidden = None
        self.sending = False

    def close(self) -> None:
        self.close_hidden()
        for fd in (self.out, self.report, self.request):
            os.close(fd)


def _collect(job: _Job, timeout: float) -> tuple[str, int | None, str | None]:
    """Waits for the child while reading its pipes (each kept up to its bound, the rest read and dropped)
    and handing over the hidden inputs when it asks."""
    pidfd = os.pidfd_open(job.pid)
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            writing = [job.hidden] if job.sending and job.hidden is not None else []
            readable, writable, _ = select.select([pidfd, *job.open], writing, [], left)
            for fd in readable:
                if fd != pidfd:
                    job.read(fd)
            if writable:
                job.send()
            if pidfd in readable:
                break
    finally:
        os.close(pidfd)
    if timed_out:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _, status = os.waitpid(job.pid, 0)
    job.close_hidden()
    _kill_leftovers()  # their copies of the pipes close with them
    for fd in list(job.open):  # what the child wrote just before it ended
        job.read(fd)
    job.close()
    if timed_out:
        return "timed_out", None, None
    if os.WIFSIGNALED(status):
        return "signaled", None, signal.Signals(os.WTERMSIG(status)).name
    return "exited", os.WEXITSTATUS(status), None


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

    from ..blame import culprit_for
    from ..exercises import EXERCISES, get

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


def _answer(reply: int, head: dict, payloads: list[bytes]) -> None:
    data = json.dumps(head).encode() + b"\n" + b"".join(payloads)
    view = memoryview(data)
    while view:
        view = view[os.write(reply, view):]


def serve(scratch: str, drop_root: bool, exercise_ids: tuple[str, ...] | None = None) -> None:
    """Answers jobs until its stdin closes. `exercise_ids`: the exercises it grades, whose needs it warms
    (None: every exercise's)."""
    if drop_root:
        _drop_root()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a killed grader takes its workers with it
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_DUMPABLE, 0)  # a job (same user) may not ptrace us or read our memory
    one_malloc_arena()
    reply = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # stray prints of imported code must not corrupt the protocol
    requests = _Input(0)

    import torch  # noqa: F401 - the point of a warm worker: imported once, inherited by every job

    from .. import exercises  # noqa: F401 - every exercise's module, imported once here, not in each job
    from . import guard, wire, worker  # noqa: F401
    from .sandbox import python_paths

    torch.set_num_threads(1)
    _warm_up(exercise_ids)
    snapshot = guard.Snapshot()  # of the grader's modules as every job starts: what answer code may not change
    keep = tuple(p for p in python_paths() if p.startswith(scratch.rstrip(os.sep) + os.sep))
    _answer(reply, {"ready": True, "pid": os.getpid()}, [])
    while True:
        request = requests.request()
        if request is None:
            return
        job = requests.exact(int(request["job"]))
        if job is None:
            return
        out_r, out_w = os.pipe()
        report_r, report_w = os.pipe()
        request_r, request_w = os.pipe()
        hidden_r, hidden_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            for fd in (out_r, report_r, request_r, hidden_w):
                os.close(fd)
            _run_child(request, job, {1: out_w, 2: out_w, 3: report_w, 4: request_w, 5: hidden_r}, scratch, snapshot)
        del job
        request.pop("token")
        for fd in (out_w, report_w, request_w, hidden_r):
            os.close(fd)
        hidden = requests.exact(int(request["hidden"])) or b""  # read only now: the job's copy of us lacks it
        running = _Job(pid, out_r, report_r, request_r, hidden_w, hidden,
                       {out_r: int(request["output"]), report_r: int(request["report"])})
        del hidden
        status, code, sig = _collect(running, float(request["timeout"]))
        clean = _empty(scratch, keep)
        _answer(reply, {"status": status, "code": code, "signal": sig,
                        "report": len(running.data[report_r]), "report_cut": running.cut[report_r],
                        "stdout": len(running.data[out_r]), "stdout_cut": running.cut[out_r],
                        "public_stdout": running.printed_before_hidden(),
                        "hidden_sent": running.public_stdout is not None, "clean": clean},
                [bytes(running.data[report_r]), bytes(running.data[out_r])])


def _exercise_ids(argv: list[str]) -> tuple[str, ...] | None:
    """`--exercises a,b` among the options (the grader's own, checked before it started this worker)."""
    for i, arg in enumerate(argv[:-1]):
        if arg == "--exercises":
            return tuple(argv[i + 1].split(","))
    return None


if __name__ == "__main__":
    serve(sys.argv[1], "--drop-root" in sys.argv[2:], _exercise_ids(sys.argv[2:]))
