"""The bubblewrap sandbox a warm worker lives in: no network, a read-only system, a private /tmp of bounded
size as the only writable place, and nothing of the course but the installed package: no references, no
solutions/, no other submission, no results. Nothing is shared with the grader but two pipes. Where the
machine has an NVIDIA GPU, its device files and the driver's libraries are there too (gpu_binds), so that
`--device cuda` works in the sandbox.

Its user is never root on the host. Run by an ordinary user, bubblewrap makes a user namespace whose user
maps to that user. Run as root, a user namespace would map the sandbox's user to root outside (able to read
/etc/shadow, say), so there is none: the worker becomes "nobody" itself, first thing (template.py), with no
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
from collections.abc import Iterable
from pathlib import Path

from ..feedback import language
from ..feedback.wording import say

SCRATCH = "/tmp"
"""The sandbox's only writable place: a tmpfs of its own, emptied after every job."""

ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")
"""What of /etc the worker may see: the dynamic loader's cache, the time zone, user and group names."""

THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32")
"""The system folders the sandbox shows, read-only."""
DRIVER_LIBRARIES = ("libcuda.", "libnvidia-")


def python_paths() -> list[str]:
    """What the worker's Python needs to see: its installation, the environment, the package."""
    package = str(Path(__file__).resolve().parent.parent)  # autograder/, found without importing it
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix, package}
    return sorted(paths)


def as_root() -> bool:
    return os.geteuid() == 0


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", *_folders(["/etc/x", "/sys/devices/system/cpu"])]
    for top in SYSTEM_ROOTS[1:]:
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


def driver_libraries() -> list[str]:
    """Where the dynamic loader finds the NVIDIA driver's libraries (libcuda, libnvidia-*), from `ldconfig -p`;
    none where there is no ldconfig."""
    ldconfig = shutil.which("ldconfig", path="/sbin:/usr/sbin:/usr/bin:/bin")
    if ldconfig is None:
        return []
    try:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.rpartition(" => ")[2].strip() for line in listing.splitlines()
            if " => " in line and line.strip().startswith(DRIVER_LIBRARIES)]


def gpu_binds(dev: Path = Path("/dev"), libraries: Iterable[str] | None = None,
              shown: Iterable[str] = SYSTEM_ROOTS) -> list[str]:
    """What the sandbox needs to show of an NVIDIA GPU, where the machine has one (a /dev/nvidiactl): every
    /dev/nvidia* device node and folder (the GPUs, nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset,
    nvidia-caps), and the folders of the driver's libraries that are not already in the sandbox (most are under
    /usr, which it shows). /proc/driver/nvidia needs nothing: the sandbox's own /proc shows it. `dev`,
    `libraries` and `shown` are parameters so that a test can hand a fake machine."""
    if not (dev / "nvidiactl").exists():
        return []
    args: list[str] = []
    for node in sorted(dev.glob("nvidia*")):
        args += ["--dev-bind", str(node), f"/dev/{node.name}"]
    roots = tuple(root.rstrip("/") + "/" for root in shown)
    folders = {os.path.dirname(os.path.realpath(p)) for p in (driver_libraries() if libraries is None else libraries)}
    for folder in sorted(f for f in folders if not (f + "/").startswith(roots)):
        args += [*_folders([folder]), "--ro-bind", folder, folder]
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
    args += ["--proc", "/proc", "--dev", "/dev", *gpu_binds(), "--remount-ro", "/",
             "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", SCRATCH,
             "--setenv", "TMPDIR", SCRATCH, "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
             "--setenv", "PYTHONUNBUFFERED", "1"]
    for key, value in {**THREAD_ENV, **language_env()}.items():
        args += ["--setenv", key, value]
    return [*args, "--chdir", "/", "--", *inner]


def language_env() -> dict[str, str]:
    """The language the grading speaks, for the words a job makes (an exercise's explanations): the grader's own
    choice (COURSE_LANGUAGE, which `--language` and a bundle's configuration set), and nothing else of its
    environment."""
    return {language.ENV: language.chosen()}


def plain_env(scratch: Path) -> dict[str, str]:
    """The environment of an unsandboxed worker: minimal, nothing of the grader's."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1", **THREAD_ENV, **language_env()}


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox a worker here, or None when it can (tried once per process)."""
    if shutil.which("bwrap") is None:
        return say("run: no bubblewrap")
    drop = "import os; os.setgroups([]); os.setgid(65534); os.setuid(65534); " if as_root() else ""
    try:
        cmd = bwrap_command([sys.executable, "-I", "-c", drop + "import autograder"], 1024**2)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return say("run: bubblewrap failed to start", error=e)
    if done.returncode != 0:
        return say("run: bubblewrap failed", error=(done.stderr or done.stdout).strip()[-300:])
    return None
