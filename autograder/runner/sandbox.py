"""The bubblewrap sandbox a warm worker lives in: no network, a private /tmp, a read-only system, and
nothing of the course but the installed package: no solutions/, no other submission, no results.

Inside, the worker is user "nobody" in a user namespace of its own, with no capability left. Fork
storms are stopped by a pids cgroup per slot where the grader may create one (as root), else by
RLIMIT_NPROC. Where bubblewrap cannot run, the pool falls back to rlimits in a plain process, and says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import autograder

SANDBOX_UID = 65534
"""The worker's user inside the sandbox ("nobody"); outside it maps to the grader's own user."""

SLOT_MOUNT = "/slot"
"""Where the slot's folder appears inside the sandbox: outside /tmp, which the worker empties after each job."""

THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def python_paths() -> list[str]:
    """What the worker's Python needs to see: its installation, the environment, the package."""
    package = str(Path(autograder.__file__).resolve().parent)
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix, package}
    return sorted(paths)


def _system_binds() -> list[str]:
    args: list[str] = []
    for top in ("/usr", "/etc"):
        args += ["--ro-bind", top, top]
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    return args


def bwrap_command(slot_dir: Path, inner: list[str]) -> list[str]:
    """The command line that starts `inner` inside a fresh sandbox whose only writable place is slot_dir,
    seen inside as SLOT_MOUNT."""
    args = ["bwrap", "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--die-with-parent", "--new-session", *_system_binds(),
            "--tmpfs", "/tmp"]  # before the Python binds: a venv may live under /tmp (a fresh clone there)
    for path in python_paths():
        args += ["--ro-bind", path, path]
    args += ["--bind", str(slot_dir), SLOT_MOUNT, "--proc", "/proc", "--dev", "/dev",
             "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", SLOT_MOUNT,
             "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONNOUSERSITE", "1",
             "--setenv", "PYTHONUNBUFFERED", "1"]
    for key, value in THREAD_ENV.items():
        args += ["--setenv", key, value]
    return [*args, "--chdir", SLOT_MOUNT, "--", *inner]


def plain_env(slot_dir: Path) -> dict[str, str]:
    """The environment of an unsandboxed worker: minimal, nothing of the grader's."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(slot_dir), "TMPDIR": str(slot_dir), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1", "PYTHONUNBUFFERED": "1", **THREAD_ENV}


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox a worker here, or None when it can (tried once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"autograder-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        cmd = bwrap_command(probe, [sys.executable, "-c", "import autograder"])
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap failed to start: {e}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if done.returncode != 0:
        return f"bubblewrap failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None
