"""No job sees the one before it on its worker, nor reaches the worker itself. Each job is forked from a
template that never held a job's data, into PID, IPC and user namespaces of its own, and the slot's cgroup
bounds the memory of all its processes together. Each attack below is followed, on the same single worker, by
an honest classmate."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from autograder.batch import Settings
from autograder.exercises import get
from autograder.runner import pool as pool_module
from autograder.trials import draw_hidden, plan
from tests.adversarial.conftest import EXERCISES, broken_code, grade_files, needs_sandbox
from tests.conftest import solution_code

SOLUTION = solution_code("residual_add")

SCAN = r'''
import json as _json, os as _os
import numpy as _np
from autograder.runner import wire as _wire

def _regions():
    """Every writable private mapping (the heap, anonymous memory), from /proc/self/maps opened through a
    dir_fd: the guard checks the path it is given, not what a dir_fd names."""
    root = _os.open("/", _os.O_RDONLY)
    fd, text = _os.open("proc/self/maps", _os.O_RDONLY, dir_fd=root), b""
    while chunk := _os.read(fd, 1 << 16):
        text += chunk
    _os.close(fd)
    _os.close(root)
    for line in text.decode().splitlines():
        parts = line.split()
        if parts[1].startswith("rw") and (len(parts) < 6 or parts[5].startswith(("[heap", "[anon"))):
            yield tuple(int(x, 16) for x in parts[0].split("-"))

class _Raw:
    """Any address as a numpy array: numpy's array interface takes a raw pointer (no ctypes)."""
    def __init__(self, start, size):
        self.__array_interface__ = {"data": (start, True), "shape": (size,), "typestr": "|u1", "version": 3}

_CHUNK, _OVERLAP = 1 << 26, 1 << 22
_BUFFER = bytearray(_CHUNK)  # one copy for every chunk: nothing is freed (unmapped) while memory is read

def _memory():
    """This process's memory, chunk by chunk (each one a view of _BUFFER, good until the next)."""
    target = _np.frombuffer(_BUFFER, dtype=_np.uint8)
    for start, end in list(_regions()):
        at = start
        while at < end:
            size = min(_CHUNK, end - at)
            target[:size] = _np.asarray(_Raw(at, size))
            yield memoryview(_BUFFER)[:size]
            at += size - _OVERLAP if at + size < end else size

def _reports():
    """Every report frame with outcomes in memory: (outcomes, tensors)."""
    for view in _memory():
        blob = view.obj if len(view) == len(view.obj) else bytes(view)
        at = blob.find(_wire.MAGIC)
        while at >= 0:
            try:
                size = int.from_bytes(blob[at + 4:at + 8], "little")
                head = at + 8 + size
                header_size = int.from_bytes(blob[head:head + 8], "little")
                header = _json.loads(blob[head + 8:head + 8 + header_size])
                end = head + 8 + header_size + max([v["data_offsets"][1] for k, v in header.items()
                                                     if k != "__metadata__"] or [0])
                data, tensors = _wire.unpack(blob[at:end])
                if isinstance(data, dict) and data.get("outcomes"):
                    yield data["outcomes"], tensors
            except Exception:
                pass
            at = blob.find(_wire.MAGIC, at + 1)
'''

CHEAT = SCAN + r'''
import sys as _sys
from autograder.exercises import get as _get

_EXERCISE = _get("{id}")
_KEYS = {f"{s.name}/{str(d).removeprefix('torch.')}/cpu" for s in _EXERCISE.scenarios for d in s.dtypes}
_FOUND = {}
for _outcomes, _tensors in _reports():
    if set(_outcomes) <= _KEYS:
        for _key, _o in _outcomes.items():
            _values = {n: _tensors[v["tensor"]] if isinstance(v, dict) else v
                       for n, v in _o.get("values", {{}}).items()}
            _FOUND.setdefault(_key, (_values, _o.get("error")))
print("CHEAT found", len(_FOUND), "trials")

def _instead(original):
    """A scenario that writes the classmate's observations, where they were found, instead of running."""
    def run(namespace, inputs, device, obs):
        frame = _sys._getframe(1)
        while frame is not None and "trial" not in frame.f_locals:
            frame = frame.f_back
        key = getattr(frame.f_locals["trial"], "key", None) if frame is not None else None
        if key not in _FOUND:
            return original(namespace, inputs, device, obs)
        values, error = _FOUND[key]
        obs.update(values)
        if error:
            raise type(error["type"], (Exception,), {{}})(error["message"])
    return run

for _scenario in _EXERCISE.scenarios:
    object.__setattr__(_scenario, "run", _instead(_scenario.run))
'''


def _cheat(exercise_id: str) -> str:
    """A wrong answer (the catalogue's broken one) that copies, from raw memory, the observations of whoever
    was graded before it on the same worker."""
    return CHEAT.replace("{{}}", "{}").replace("{id}", exercise_id) + "\n" + broken_code(exercise_id)


@pytest.fixture(scope="module")
def copied(pool, tmp_path_factory):
    """Per exercise: the cheat first (after another exercise's jobs), an honest classmate, the cheat again."""
    results = {}
    for exercise in EXERCISES:
        folder = tmp_path_factory.mktemp(exercise)
        files = {"cheat_first.py": _cheat(exercise), "honest.py": solution_code(exercise),
                 "cheat_after.py": _cheat(exercise)}
        results[exercise] = grade_files(pool, folder, folder / "out", files, exercise)
    return results


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_a_wrong_answer_after_an_honest_classmate_scores_what_it_scores_alone(copied, exercise):
    first, honest, after = (copied[exercise][f"{n}.py"] for n in ("cheat_first", "honest", "cheat_after"))
    assert honest["score"] == honest["max_score"], honest["output"]
    assert after["score"] == first["score"] < after["max_score"], (after["output"], after["teacher_stdout"])
    assert "CHEAT found 0 trials" in after["teacher_stdout"], after["teacher_stdout"]


MARK = uuid.uuid4().hex
SPY = SCAN + r'''
import re as _re

def _has(blob, first, second):
    """Whether `first` then `second` are in `blob`, one right after the other: the spy searches for a marker in
    two halves, so that it holds no whole copy of it itself."""
    at = blob.find(first)
    while at >= 0:
        if blob[at + len(first):at + len(first) + len(second)] == second:
            return True
        at = blob.find(first, at + 1)
    return False

_found = {"code": False, "printed": False, "hidden": False, "reports": 0, "tokens": []}
for _view in _memory():
    _blob = _view.obj if len(_view) == len(_view.obj) else bytes(_view)
    _found["code"] |= _has(_blob, CODE_HALVES)
    _found["printed"] |= _has(_blob, PRINTED_HALVES)
    _found["hidden"] |= _has(_blob, HIDDEN_HALVES)
    _found["tokens"] += [m.decode()[:16] for m in _re.findall(rb'"token": "([0-9a-f]{64})"', _blob)]
_found["reports"] = sum(1 for _ in _reports())
print("SPY", _json.dumps(_found))
'''


def _halves(data: bytes) -> str:
    """`data` as two bytes literals, for the spy's code."""
    return f"{data[:len(data) // 2]!r}, {data[len(data) // 2:]!r}"


CLASSMATE = f"# code-{MARK}\n" + SOLUTION + f"\nprint('printed-' + '{MARK}')\n"


def _hidden_bytes() -> bytes:
    """32 bytes of the batch's hidden inputs for residual_add, as the grader draws them."""
    import torch

    exercise = get("residual_add")
    inputs = draw_hidden(exercise, plan(exercise, ("cpu",), False), Settings().salt)
    tensor = next(v for values in inputs.values() for v in values.values()
                  if isinstance(v, torch.Tensor) and v.numel() >= 8 and v.is_floating_point())
    return tensor.detach().contiguous().reshape(-1).view(torch.uint8)[:32].numpy().tobytes()


@pytest.fixture(scope="module")
def spied(pool, tmp_path_factory, monkeypatch_module):
    tokens = []
    real = pool_module.secrets.token_bytes

    def recorded(n: int) -> bytes:
        tokens.append(real(n))
        return tokens[-1]

    monkeypatch_module.setattr(pool_module.secrets, "token_bytes", recorded)
    folder = tmp_path_factory.mktemp("spied")
    spy = (SPY.replace("CODE_HALVES", _halves(f"code-{MARK}".encode()))
           .replace("PRINTED_HALVES", _halves(f"printed-{MARK}".encode()))
           .replace("HIDDEN_HALVES", _halves(_hidden_bytes())) + SOLUTION)
    results = grade_files(pool, folder, folder / "out", {"classmate.py": CLASSMATE, "spy.py": spy}, "residual_add")
    return results, [t.hex()[:16] for t in tokens]


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_a_job_that_reads_raw_memory_finds_nothing_of_the_job_before(spied):
    results, tokens = spied
    classmate, spy = results["classmate.py"], results["spy.py"]
    assert classmate["status"] == "passed" and f"printed-{MARK}" in classmate["teacher_stdout"], classmate
    assert spy["status"] == "passed", spy["output"]
    line = next(line for line in spy["stdout"].splitlines() if line.startswith("SPY"))
    found = json.loads(line[4:])
    assert found["tokens"] == [] or tokens[0] not in found["tokens"], (line, tokens)
    assert (found["code"], found["printed"], found["hidden"], found["reports"]) == (False, False, False, 0), line


SHM = '''
import subprocess, sys
CODE = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key, create = 0x5ca1ab1e, sys.argv[1] == "create"
shmid = libc.shmget(key, 4096, 0o1666 if create else 0)
if shmid < 0:
    print("ABSENT")
    raise SystemExit
at = libc.shmat(shmid, None, 0)
if create:
    ctypes.memmove(at, b"MARK", 32)
    print("CREATED", shmid)
else:
    print("FOUND", ctypes.string_at(at, 32).decode())
"""
done = subprocess.run([sys.executable, "-c", CODE, "ARG"], capture_output=True, text=True)
print(done.stdout, done.stderr[-500:])
'''
LIMITS = '''
import os, resource, signal
done = []
import sys
for pid in {int(p) for p in os.listdir("/proc") if p.isdigit()} | {int(sys.argv[1])}:
    # itself and the job that started it, the job's own processes, by their numbers in /proc's namespace too
    # (the job's PID namespace is its own; /proc shows the sandbox's)
    me = int(os.readlink("/proc/self"))
    parent = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[1])
    if pid in (0, os.getpid(), os.getppid(), me, parent):
        continue
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_CPU):
        try:
            resource.prlimit(pid, limit, (16, 16))
            done.append(("prlimit", pid, limit))
        except OSError:
            pass
print("LOWERED", done)
'''
SIGNALS = '''
import os, signal
done = []
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for pid in {int(p) for p in os.listdir("/proc") if p.isdigit()} | {os.getppid()}:
        if pid not in (0, os.getpid()):
            try:
                os.kill(pid, sig)
                done.append((sig.name, pid))
            except OSError:
                pass
print("SIGNALLED", done)
'''
TRACE = '''
import subprocess, sys
CODE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
done = []
import sys
for pid in {int(p) for p in os.listdir("/proc") if p.isdigit()} | {int(sys.argv[1])}:
    # itself and the job that started it, the job's own processes, by their numbers in /proc's namespace too
    # (the job's PID namespace is its own; /proc shows the sandbox's)
    me = int(os.readlink("/proc/self"))
    parent = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[1])
    if pid in (0, os.getpid(), os.getppid(), me, parent):
        continue
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        done.append(("traced", pid))
        libc.ptrace(17, pid, 0, 0)
    try:
        with open(f"/proc/{pid}/mem", "rb") as mem:
            done.append(("opened memory", pid))
    except OSError:
        pass
print("REACHED", done)
"""
import os
done = subprocess.run([sys.executable, "-c", CODE, str(os.getppid())], capture_output=True, text=True)
print(done.stdout, done.stderr[-500:])
import os
root = os.open("/", os.O_RDONLY)
status = os.read(os.open("proc/self/status", os.O_RDONLY, dir_fd=root), 1 << 16).decode()
print("OWN", [line.replace("\\t", " ") for line in status.splitlines() if line.startswith(("Cap", "NoNewPrivs"))])
'''
FORKS = '''
import os, select, time
size = 800 * 2**20
ready_r, ready_w = os.pipe()
children = []
for i in range(3):
    try:
        pid = os.fork()
    except OSError as e:
        print("FORK REFUSED", e)
        break
    if pid == 0:
        os.close(ready_r)
        held = bytearray(b"\\x01") * size  # written, so resident
        os.write(ready_w, bytes([i]))
        time.sleep(60)
        os._exit(0)
    children.append(pid)
os.close(ready_w)
ready, gone, deadline = set(), set(), time.monotonic() + 10
while time.monotonic() < deadline:
    if select.select([ready_r], [], [], 0.2)[0]:
        ready |= set(os.read(ready_r, 8))
    gone |= {i for i, pid in enumerate(children) if i not in gone and os.waitpid(pid, os.WNOHANG)[0]}
    if ready | gone == set(range(len(children))):
        break
print("HELD", len(ready - gone), "at once, of", len(children))
for i, pid in enumerate(children):
    if i not in gone:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
'''


def _slot_processes(pool) -> dict[int, str]:
    """The worker's processes on the host (its bubblewrap and everything under it), with their limits."""
    top = pool._slots[0].proc.pid
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, frontier = [top], [top]
    while frontier:
        top = frontier.pop()
        children = [p for p, parent in parents.items() if parent == top]
        tree += children
        frontier += children
    return {pid: Path(f"/proc/{pid}/limits").read_text() for pid in tree if Path(f"/proc/{pid}/limits").exists()}


@pytest.fixture(scope="module")
def reached(pool, tmp_path_factory):
    """The attacks on the worker and on the jobs after it, each followed by an honest classmate; the worker's
    processes and their limits before and after."""
    pool.ready()
    before = _slot_processes(pool)
    marker = uuid.uuid4().hex
    files = {"limits.py": LIMITS + SOLUTION, "honest_after_limits.py": SOLUTION,
             "signals.py": SIGNALS + SOLUTION, "honest_after_signals.py": SOLUTION, "trace.py": TRACE + SOLUTION,
             "shm_create.py": SHM.replace("MARK", marker).replace("ARG", "create") + SOLUTION,
             "shm_find.py": SHM.replace("ARG", "find") + SOLUTION,
             "forks.py": FORKS + SOLUTION, "honest_after_forks.py": SOLUTION}
    folder = tmp_path_factory.mktemp("reach")
    results = grade_files(pool, folder, folder / "out", files, "residual_add")
    return results, before, _slot_processes(pool), marker


def test_a_job_cannot_lower_its_workers_limits_and_later_jobs_are_unhurt(reached):
    results, before, after, _ = reached
    assert results["honest_after_limits.py"]["status"] == "passed", results["honest_after_limits.py"]["output"]
    assert {pid: limits for pid, limits in after.items() if pid in before} == before


def test_a_job_cannot_stop_or_kill_its_worker(reached):
    results, before, after, _ = reached
    assert results["honest_after_signals.py"]["status"] == "passed", results["honest_after_signals.py"]["output"]
    assert set(before) <= set(after), "the worker was restarted: a job stopped or killed it"
    for pid in before:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "T", f"process {pid} of the worker is stopped"


def test_a_job_cannot_trace_any_process_it_can_see_nor_open_its_memory(reached):
    """Not even its own namespace's init, nor the process that forked it (the job's own processes aside):
    they are in another user namespace, or not dumpable (native code, in a process of its own, outside the
    guard's reach)."""
    results, _, _, _ = reached
    assert "REACHED []" in results["trace.py"]["stdout"], results["trace.py"]["stdout"]


def test_a_job_holds_no_capability_and_can_gain_none(reached):
    results, _, _, _ = reached
    line = next(line for line in results["trace.py"]["stdout"].splitlines() if line.startswith("OWN"))
    fields = dict(entry.split() for entry in json.loads(line[4:].replace("'", '"')))
    assert fields == {"CapInh:": "0" * 16, "CapPrm:": "0" * 16, "CapEff:": "0" * 16, "CapBnd:": "0" * 16,
                      "CapAmb:": "0" * 16, "NoNewPrivs:": "1"}, line


@needs_sandbox
def test_system_v_shared_memory_ends_with_its_job(reached):
    results, _, _, marker = reached
    made, looked = results["shm_create.py"], results["shm_find.py"]
    assert "CREATED" in made["stdout"], made["stdout"]
    assert "ABSENT" in looked["stdout"] and marker not in looked["stdout"], looked["stdout"]


@needs_sandbox
def test_a_job_that_forks_cannot_exceed_its_memory_in_total(reached):
    """Three children of 0.8 GiB each under a 1 GiB limit: each within its own RLIMIT_AS, so only the slot's
    cgroup (or, without one, no fork at all) keeps them from holding 2.4 GiB together."""
    results, _, _, _ = reached
    forks = results["forks.py"]
    held = [line for line in forks["stdout"].splitlines() if line.startswith("HELD")]
    assert forks["status"] == "crashed" or (held and int(held[0].split()[1]) <= 1), forks["stdout"]
    assert results["honest_after_forks.py"]["status"] == "passed", results["honest_after_forks.py"]["output"]


def _memory_of(pid: int) -> bytes:
    """What a process holds in its writable memory, read as root does (the tests run as root with the sandbox)."""
    chunks = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            parts = line.split()
            if parts[1].startswith("rw") and (len(parts) < 6 or parts[5].startswith(("[heap", "[anon"))):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                try:
                    mem.seek(start)
                    chunks.append(mem.read(end - start))
                except OSError:
                    pass
    return b"".join(chunks)


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="reads another process's memory: needs root")
def test_the_template_holds_nothing_of_any_job(pool, spied):
    """Read from outside after jobs ran: the template's memory, which every later job inherits, holds none of
    their code, output, hidden inputs or tokens."""
    _, tokens = spied
    tree = _slot_processes(pool)
    pythons = [pid for pid in tree if Path(f"/proc/{pid}/comm").read_text().startswith("python")]
    parent = {pid: int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in pythons}
    template = next(pid for pid in pythons if parent[pid] in pythons)  # the relay forks the template
    held = _memory_of(template)
    assert b"torch._C" in held  # the search reads what the template holds
    for marker in (f"code-{MARK}".encode(), f"printed-{MARK}".encode(), _hidden_bytes(), b'"token": "'):
        assert marker not in held, marker
    assert not any(bytes.fromhex(t) in held for t in tokens)
