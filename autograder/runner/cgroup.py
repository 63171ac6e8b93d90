"""A pool slot's cgroups, where this process may make them (as root): a pids limit, the fork-storm stop that
works for root too (RLIMIT_NPROC does not bind root, nor a sandbox whose user maps to root), and a memory
limit on the worker's whole tree, so that a job's processes together stay within the job's memory. cgroup
v2, or v1's separate pids and memory hierarchies. The root is a parameter, so a test can hand a fake tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "autograder"
# Bytes of page cache charged to a slot that its limit keeps room for (torch's code that a job runs), beyond
# what the warm worker holds and the job may allocate: the rest of the cache the kernel reclaims for the job.
FILE_CACHE = 128 * 1024**2


@dataclass(frozen=True)
class SlotCgroup:
    """The folders that hold a slot's limits (one for both in v2; two in v1); `memory` None where the memory
    controller is not to be had."""

    pids: Path
    memory: Path | None
    v2: bool

    @property
    def folders(self) -> list[Path]:
        return list(dict.fromkeys(p for p in (self.pids, self.memory) if p is not None))

    def enter(self) -> None:
        """Moves the calling process into the slot's cgroups (for a preexec_fn: children inherit them)."""
        for folder in self.folders:
            with open(folder / "cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

    def unbound_memory(self) -> None:
        """No memory limit (before a worker starts: its baseline is measured once it is warm)."""
        if self.memory is not None:
            self._set_memory("max" if self.v2 else "-1")

    def bound_memory(self, beyond: int) -> bool:
        """Limits the slot to what the warm worker holds now, plus `beyond` bytes; False where it could not.

        What it holds is its usage less the page cache charged to it (torch's libraries, which the worker
        was first to read where the grader had not imported torch yet: a gigabyte and more), beyond
        FILE_CACHE of it: the kernel reclaims that cache when a job needs memory, so counting it would let a
        job's processes together hold that much more than `beyond` (forked children 2.4 GiB under a 1 GiB
        limit). Both hierarchies charge the cache alike; they name it differently in memory.stat."""
        if self.memory is None:
            return False
        try:
            usage = int((self.memory / ("memory.current" if self.v2 else "memory.usage_in_bytes")).read_text())
            held = usage - max(0, self.reclaimable() - FILE_CACHE)
            self._set_memory(str(held + beyond))
        except (OSError, ValueError):
            return False
        return True

    def reclaimable(self) -> int:
        """The page cache charged to the slot that the kernel can reclaim: file pages, tmpfs and shared
        memory aside (they stay until removed)."""
        assert self.memory is not None
        stat = {}
        try:
            text = (self.memory / "memory.stat").read_text()
        except OSError:  # no such file where the controller gives none: nothing counted as reclaimable
            return 0
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if value.strip().isdigit():
                stat[name] = int(value)
        if self.v2:  # "file" counts shmem too
            return max(0, stat.get("file", 0) - stat.get("shmem", 0))
        # v1: "total_" counts the cgroups below too (there are none); "cache" counts shmem
        return max(0, stat.get("total_cache", stat.get("cache", 0)) - stat.get("total_shmem", stat.get("shmem", 0)))

    def _set_memory(self, value: str) -> None:
        memory = self.memory
        assert memory is not None  # both callers check it first
        if self.v2:
            (memory / "memory.max").write_text(value)
            swap = memory / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
            return
        memsw = memory / "memory.memsw.limit_in_bytes"  # with swap accounting: at least the memory limit
        order = ["memory.limit_in_bytes", memsw.name]
        if memsw.exists() and value == "-1":
            order.reverse()  # raising: memory and swap first
        for name in order:
            if name == memsw.name and not memsw.exists():
                continue
            (memory / name).write_text(value)
        swappiness = memory / "memory.swappiness"
        if not memsw.exists() and swappiness.exists():  # no swap accounting: no swapping, or swap is room too
            swappiness.write_text("0")

    def remove(self) -> None:
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                pass


def make(name: str, max_pids: int, root: Path = ROOT) -> SlotCgroup | None:
    """Fresh cgroups for one slot, limited to max_pids tasks (memory: see bound_memory), or None where cgroups
    cannot be written."""
    try:
        if (root / "cgroup.controllers").exists():
            return _make_v2(root, name, max_pids)
        if (root / "pids" / "cgroup.procs").exists():
            return _make_v1(root, name, max_pids)
    except OSError:
        return None
    return None


def _make_v2(root: Path, name: str, max_pids: int) -> SlotCgroup | None:
    available = (root / "cgroup.controllers").read_text().split()
    wanted = [c for c in ("pids", "memory") if c in available]
    if "pids" not in wanted:
        return None
    base = root / GROUP
    _remove_stale(base)
    base.mkdir(exist_ok=True)
    for folder in (root, base):  # controllers reach a cgroup only where every parent passes them on
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
    path = base / name
    path.mkdir(exist_ok=True)
    (path / "pids.max").write_text(str(max_pids))
    return SlotCgroup(path, path if "memory" in wanted else None, True)


def _make_v1(root: Path, name: str, max_pids: int) -> SlotCgroup | None:
    found = {}
    for controller in ("pids", "memory"):
        if not (root / controller / "cgroup.procs").exists():
            continue
        base = root / controller / GROUP
        _remove_stale(base)
        try:
            (base / name).mkdir(parents=True, exist_ok=True)
        except OSError:
            if controller == "pids":
                raise
            continue
        found[controller] = base / name
    (found["pids"] / "pids.max").write_text(str(max_pids))
    return SlotCgroup(found["pids"], found.get("memory"), False)


def _remove_stale(parent: Path) -> None:
    """Empty cgroups of pools whose grader is gone (killed before it could clean up)."""
    if not parent.is_dir():
        return
    for child in parent.iterdir():
        owner = child.name.split("-")[0]
        if child.is_dir() and owner.isdigit() and not Path(f"/proc/{owner}").exists():
            try:
                child.rmdir()
            except OSError:
                pass
