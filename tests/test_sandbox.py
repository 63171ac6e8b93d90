"""Untrusted code: every attack gets a verdict, earns nothing it did not earn honestly, changes nothing
for any other submission, and leaves nothing running. One warm pool serves the whole module."""

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid

import pytest

from autograder.batch import Settings, grade_batch
from autograder.runner.limits import Limits
from autograder.runner.pool import PoolError, WarmPool
from autograder.runner.sandbox import bwrap_problem
from tests.conftest import ROOT, solution_code
from tests.exercises.test_residual_add import BROKEN

pytestmark = pytest.mark.slow
SANDBOXED = bwrap_problem() is None
needs_bwrap = pytest.mark.skipif(not SANDBOXED, reason=f"bubblewrap unavailable: {bwrap_problem()}")

SOLUTION = solution_code("residual_add")
MARK = "autograder-leftover-987654"
LEFT_BEHIND = f"left-behind-{uuid.uuid4().hex}"
"""Unique per run: CI shares /tmp with earlier (possibly unsandboxed) runs on the same machine."""


def _listener():
    """A TCP server on loopback that a sandboxed submission must not reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    return server


SERVER = _listener()
PORT = SERVER.getsockname()[1]

ATTACKS = {
    # name: (code, statuses allowed, the honest score it must not beat: None = 0)
    "patch allclose and equal": (BROKEN + "\ntorch.allclose = lambda *a, **k: True\n"
                                 "torch.equal = lambda *a, **k: True\n",
                                 {"failed"}, "broken"),
    "patch gradcheck": (BROKEN + "\ntorch.autograd.gradcheck = lambda *a, **k: True\n", {"failed"}, "broken"),
    "patch backward to swallow the error": (BROKEN + """
_backward = torch.Tensor.backward
def backward(self, *args, **kwargs):
    try:
        _backward(self, *args, **kwargs)
    except RuntimeError:
        pass
torch.Tensor.backward = backward
""", {"failed"}, "broken"),
    "tensor subclass that claims equality": (BROKEN.replace("        return out", """        class Liar(torch.Tensor):
            def __eq__(self, other):
                return True
            def allclose(self, *args, **kwargs):
                return True
        return out.as_subclass(Liar)"""), {"failed"}, "broken"),
    "prints fake results and exits 0": ('import json\nprint(json.dumps({"score": 10, "max_score": 10, "tests": []}))\n'
                                        "import os\nos._exit(0)\n", {"crashed"}, None),
    "sys.exit(0) while loading": ("import sys\nsys.exit(0)\n", {"failed"}, None),
    "KeyboardInterrupt while loading": ("raise KeyboardInterrupt\n", {"failed", "crashed"}, None),
    "kills its parent": ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", {"crashed"}, None),
    "segfault": ("import faulthandler\nfaulthandler._sigsegv()\n", {"crashed"}, None),
    "ctypes": ("import ctypes\nctypes.string_at(0)\n", {"failed"}, None),  # refused by the worker's guard
    "infinite loop": ("while True:\n    pass\n", {"timed_out"}, None),
    "memory bomb": ("import torch\nx = torch.ones(2**31, dtype=torch.uint8)\n"
                    "y = torch.ones(2**31, dtype=torch.uint8)\n",
                    {"failed", "crashed"}, None),
    "fork storm": ("import os\nwhile True:\n    os.fork()\n", {"failed", "crashed", "timed_out"}, None),
    "background process left behind": (SOLUTION + "\nimport subprocess\nsubprocess.Popen(['sh', '-c', "
                                       f"'sleep 300 # {MARK}'], start_new_session=True)\n", {"passed"}, 10),
    "huge output": ("print('x' * 10**9)\n", {"failed", "crashed"}, None),
    "deep recursion": (SOLUTION + "\ndef f(n):\n    return f(n + 1)\nf(0)\n", {"failed"}, None),
    "writes files": (SOLUTION + f"\nopen('/tmp/{LEFT_BEHIND}', 'w').write('x')\n"
                                f"open('{LEFT_BEHIND}', 'w').write('x')\n",
                     {"passed"}, 10),
}
if SANDBOXED:
    ATTACKS |= {
        # a solution that fails if it can see what it must not: full marks prove it saw nothing
        "cannot see solutions or the course": (SOLUTION + f"""
import os
import sys
for path in {[str(ROOT / 'solutions'), str(ROOT / 'tests'), str(ROOT / 'samples'), str(ROOT.parent / 'shared')]!r}:
    assert not os.path.exists(path) or not os.listdir(path), path
""", {"passed"}, 10),
        "no network": (SOLUTION + f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {PORT}), timeout=2)
    raise AssertionError("reached the network")
except OSError:
    pass
""", {"passed"}, 10),
        "sees no other job's files": (SOLUTION + f"\nimport os\nassert not os.path.exists('/tmp/{LEFT_BEHIND}')\n",
                                      {"passed"}, 10),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("out")
    names = {}
    for i, (name, (code, _, _)) in enumerate(ATTACKS.items()):
        path = folder / f"attack_{i:02d}.py"
        path.write_text(code)
        names[name] = path.name
        (folder / f"honest_{i:02d}.py").write_text(SOLUTION)  # an honest neighbour after every attack
    (folder / "broken.py").write_text(BROKEN)
    settings = Settings(exercise="residual_add", timeout=8)
    with WarmPool(1, Limits(memory=1024**3)) as pool:  # one slot: each job follows the last
        results = [r.to_json() for r in grade_batch([folder], out, settings, pool, jobs=1)]
    by_name = {r["submission"]: r for r in results}
    return names, by_name


def test_honest_neighbours_are_all_graded_correctly(graded):
    _, results = graded
    honest = [r for n, r in results.items() if n.startswith("honest_")]
    assert len(honest) == len(ATTACKS)
    assert [r["score"] for r in honest] == [10] * len(honest), [(r["submission"], r["output"]) for r in honest]


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_gets_a_verdict_and_no_unearned_points(graded, name):
    names, results = graded
    code, statuses, ceiling = ATTACKS[name]
    result = results[names[name]]
    assert result["status"] in statuses, (result["status"], result["output"])
    honest = {"broken": results["broken.py"]["score"], None: 0}.get(ceiling, ceiling)
    assert result["score"] <= honest
    assert len(json.dumps(result)) < 100_000  # huge output is cut, results stay small


def test_nothing_outlives_its_grading(graded):
    leftovers = subprocess.run(["pgrep", "-f", MARK], capture_output=True, text=True).stdout.split()
    assert leftovers == []


def test_files_written_by_a_submission_stay_in_its_sandbox(graded):
    here, tmp = ROOT / LEFT_BEHIND, f"/tmp/{LEFT_BEHIND}"
    try:
        assert not here.exists()
        if SANDBOXED:
            assert not os.path.exists(tmp)
    finally:  # unsandboxed runs do write to /tmp: leave the machine clean for the next run
        for path in (here, tmp):
            if os.path.exists(path):
                os.remove(path)


def test_without_bubblewrap_the_pool_says_so(monkeypatch):
    monkeypatch.setattr("autograder.runner.pool.bwrap_problem", lambda: "bubblewrap is not installed")
    with WarmPool(1, Limits()) as pool:
        assert not pool.sandboxed and "NOT SANDBOXED" in pool.warning


def test_workers_outlive_the_threads_that_started_them():
    """bwrap --die-with-parent fires when the starting *thread* ends: slots must not die after start."""
    import time

    with WarmPool(2, Limits()) as pool:
        time.sleep(1.5)
        assert [slot.proc.poll() for slot in pool._slots] == [None, None]


@needs_bwrap
def test_python_that_lives_under_tmp_stays_visible(monkeypatch, tmp_path_factory):
    """A fresh clone in /tmp puts the venv there: the sandbox's private /tmp must not hide it."""
    import sys

    from autograder.runner import sandbox

    under_tmp = tempfile.mkdtemp(prefix="autograder-venv-", dir="/tmp")
    try:
        marker = os.path.join(under_tmp, "marker")
        open(marker, "w").close()
        paths = sandbox.python_paths()
        monkeypatch.setattr(sandbox, "python_paths", lambda: [*paths, under_tmp])
        code = f"import os, sys; sys.exit(0 if os.path.exists({marker!r}) else 3)"
        done = subprocess.run(sandbox.bwrap_command([sys.executable, "-c", code], 1024**2), capture_output=True)
        assert done.returncode == 0, done.stderr
    finally:
        shutil.rmtree(under_tmp)


def test_emptying_tmp_spares_python_and_removes_the_rest(tmp_path):
    from autograder.runner.worker.scratch import empty

    keep = tmp_path / "clone" / ".venv"
    (keep / "bin").mkdir(parents=True)
    (keep / "bin" / "python").write_text("x")
    (tmp_path / "clone" / "left-by-job").write_text("x")
    (tmp_path / "dir-by-job" / "deep").mkdir(parents=True)
    (tmp_path / "file-by-job").write_text("x")
    empty(str(tmp_path), (str(keep),))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "clone", "clone/.venv", "clone/.venv/bin", "clone/.venv/bin/python"]


@pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0, reason="needs bubblewrap, run as root")
def test_where_bubblewrap_is_installed_as_root_it_sandboxes():
    """CI installs bubblewrap and runs as root: a sandbox that silently fell back would skip the
    sandbox-only attacks above, so say it here (this is how a venv under /tmp was once missed)."""
    assert bwrap_problem() is None


def test_a_pool_launched_without_waiting_is_ready_later_or_says_why(monkeypatch):
    with WarmPool(2, Limits(), wait=False) as pool:
        pool.ready()
        pool.ready()  # once is enough; again is harmless
        assert [slot.proc.poll() for slot in pool._slots] == [None, None]
    monkeypatch.setattr("autograder.runner.pool.sys.executable", "/bin/false")  # a worker that dies at once
    pool = WarmPool(1, Limits(), sandbox=False, wait=False)
    with pytest.raises(PoolError, match="did not start"):
        pool.ready()
    assert pool._slots[0].proc is None  # closed


def test_run_as_never_means_root_nor_a_user_that_is_not_there():
    from autograder.runner.pool import _user

    with pytest.raises(PoolError, match="may not run as root"):
        _user("root")
    with pytest.raises(PoolError, match="no user"):
        _user("no-such-user-autograder")
    if os.geteuid() == 0:
        assert _user("nobody") == (65534, 65534)


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_a_worker_takes_one_malloc_arena():
    """Under a job's RLIMIT_AS, glibc's arena per thread (64 MB of address space each) cannot be reserved and
    is tried again on every allocation: the zygote asks for one arena (benchmarks/cold_single.py shows the
    RNN exercise's job going from 2.4 s to 0.1 s under a bundle's 128 MB)."""
    probe = "from autograder.runner.worker.template import one_malloc_arena; print(one_malloc_arena())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr[-2000:]


def _fake_gpu_machine(root):
    """A /dev with an NVIDIA GPU's device files (plain files will do for bind mounts) and a driver library
    outside /usr."""
    dev = root / "dev"
    (dev / "nvidia-caps").mkdir(parents=True)
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", "null"):
        (dev / name).write_text(name)
    driver = root / "opt" / "nvidia" / "lib"
    driver.mkdir(parents=True)
    (driver / "libcuda.so.1").write_text("not really")
    return dev, ["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", str(driver / "libcuda.so.1")]


def test_the_sandbox_shows_an_nvidia_gpu_where_the_machine_has_one(tmp_path):
    from autograder.runner.sandbox import gpu_binds

    dev, libraries = _fake_gpu_machine(tmp_path)
    args = gpu_binds(dev, libraries)
    devices = {(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == "--dev-bind"}
    assert devices == {(str(dev / n), f"/dev/{n}") for n in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm",
                                                             "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps")}
    folder = str(tmp_path / "opt" / "nvidia" / "lib")
    assert ["--ro-bind", folder, folder] == args[-3:]  # the library outside /usr; the one under /usr is shown already
    assert not any("x86_64-linux-gnu" in a for a in args)
    assert gpu_binds(tmp_path / "no-gpu", libraries) == []  # no /dev/nvidiactl: nothing to show


@needs_bwrap
def test_a_gpus_files_reach_the_sandboxed_worker(tmp_path, monkeypatch):
    """The same arguments in a real sandbox: the device files after bubblewrap's own /dev (not hidden by it),
    the driver's folder read-only."""
    from autograder.runner import sandbox

    dev, libraries = _fake_gpu_machine(tmp_path)
    real = sandbox.gpu_binds
    monkeypatch.setattr(sandbox, "gpu_binds", lambda: real(dev, libraries))
    driver = tmp_path / "opt" / "nvidia" / "lib"
    look = (f"import os; print(sorted(n for n in os.listdir('/dev') if n.startswith('nvidia'))); "
            f"print(open('/dev/nvidiactl').read(), os.listdir({str(driver)!r}), os.access({str(driver)!r}, os.W_OK))")
    done = subprocess.run(sandbox.bwrap_command([sys.executable, "-c", look], 1024**2), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['nvidia-caps', 'nvidia-modeset', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia0', 'nvidia1', 'nvidiactl']",
        "nvidiactl ['libcuda.so.1'] False"]
