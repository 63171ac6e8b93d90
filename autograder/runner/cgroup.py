"""A pids cgroup per pool slot, where this process may make one: the fork-storm stop that works for
root too (RLIMIT_NPROC does not bind root, nor a sandbox whose user maps to root)."""

from __future__ import annotations

import os
from pathlib import Path

V2 = Path("/sys/fs/cgroup")
V1 = Path("/sys/fs/cgroup/pids")


def make_pids_cgroup(name: str, max_pids: int) -> Path | None:
    """A fresh cgroup limited to max_pids tasks, or None where cgroups cannot be written."""
    if (V2 / "cgroup.controllers").exists():
        base = V2
    elif (V1 / "cgroup.procs").exists():
        base = V1
    else:
        return None
    path = base / "autograder" / name
    _remove_stale(base / "autograder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        (path / "pids.max").write_text(str(max_pids))
    except OSError:
        return None
    return path


def enter(path: Path) -> None:
    """Moves the calling process into the cgroup (for a preexec_fn: children inherit it)."""
    with open(path / "cgroup.procs", "w") as f:
        f.write(str(os.getpid()))


def remove(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


def _remove_stale(parent: Path) -> None:
    """Empty cgroups of pools whose grader is gone (killed before it could clean up)."""
    if not parent.is_dir():
        return
    for child in parent.iterdir():
        owner = child.name.split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            remove(child)
