"""The bubblewrap sandbox a warm worker lives in: no network, a read-only system, a private /tmp of bounded
size as the only writable place, and nothing of the course but the installed package: no references, no
solutions/, no other submission, no results. Nothing is shared with the grader but two pipes.

Its user is never root on the host. Run by an ordinary user, bubblewrap makes a user namespace whose user
maps to that user. Run as root, a user namespace would map the sandbox's user to root outside (able to read
/etc/shadow, say), so there is none: the worker becomes "nobody" itself, first thing (zygote.py), with no
capability left and no way back (no_new_privs). Only the files Python needs from /etc are there. Fork
storms are stopped by a pids cgroup per slot where the grader may make one (as root), else by
RLIMIT_NPROC. Where bubblewrap cannot run, the pool falls back to rlimits in a plain process, and says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

SCRATCH = "/tmp"
"""The sandbox's only writable place: a tmpfs of its own, emptied after every job."""

ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")
"""What of /etc the worker may see: the dynamic loader's cache, the time zone, user and group names."""

THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def python_paths() -> list[str]:
    """What the worker's Python needs to see: its installation, the environment, the package."""
    package = str(Path(__file__).resolve().parent.parent)  # autograder/, found without importing it
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix, package}
    return sorted(paths)


def as_root() -> bool:
    return os.geteuid() == 0


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", *_folders(["/etc/x", "/sys/devices/system/cpu"])]
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    args += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    return args


def _folders(paths: list[str]) -> list[str]:
    """Folders on the way to the bound paths, made world-readable (as root, bubblewrap makes them 0700)."""
    found = set()
    for path in paths:
        parent = os.path.dirname(path)
        while parent not in ("/", "", SCRATCH):
            found.add(parent)
            parent = os.path.dirname(parent)
    args: list[str] = []
    for folder in sorted(found, key=lambda p: p.count("/")):
        args += ["--perms", "0755", "--dir", folder]
    return args


def bwrap_command(inner: list[str], scratch_bytes: int) -> list[str]:
    """The command line that starts `inner` inside a fresh sandbox whose only writable place is a private
    SCRATCH of `scratch_bytes`."""
    if as_root():
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                      "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # to become nobody, then none
    else:
        namespaces = ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534"]
    paths = python_paths()
    args = ["bwrap", *namespaces, "--die-with-parent", "--new-session", *_system_binds(),
            "--perms", "1777", "--size", str(scratch_bytes), "--tmpfs", SCRATCH,  # before the Python binds (a venv
            # may live under /tmp); writable by the sandbox user, who is not root
            *_folders(paths)]
    for path in paths:
        args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/",
             "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", SCRATCH,
             "--setenv", "TMPDIR", SCRATCH, "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
             "--setenv", "PYTHONUNBUFFERED", "1"]
    for key, value in THREAD_ENV.items():
        args += ["--setenv", key, value]
    return [*args, "--chdir", "/", "--", *inner]


def plain_env(scratch: Path) -> dict[str, str]:
    """The environment of an unsandboxed worker: minimal, nothing of the grader's."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1", **THREAD_ENV}


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox a worker here, or None when it can (tried once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    drop = "import os; os.setgroups([]); os.setgid(65534); os.setuid(65534); " if as_root() else ""
    try:
        cmd = bwrap_command([sys.executable, "-I", "-c", drop + "import autograder"], 1024**2)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap failed to start: {e}"
    if done.returncode != 0:
        return f"bubblewrap failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None
