"""The slot's cgroups, on fake trees of both layouts (the real one is used by tests/adversarial, as root): what
is made, what limits are written, and that a grader gone leaves nothing behind for long."""

from __future__ import annotations

from pathlib import Path

from autograder.runner import cgroup


def _v2(root: Path, controllers: str = "cpuset cpu io memory pids") -> Path:
    root.mkdir()
    (root / "cgroup.controllers").write_text(controllers)
    (root / "cgroup.subtree_control").write_text("")
    return root


def test_v2_gets_pids_and_memory_passed_down_and_a_limit_from_the_warm_baseline(tmp_path):
    root = _v2(tmp_path / "cg")
    (root / "autograder" / "999999999-0").mkdir(parents=True)  # a pool whose grader is gone
    made = cgroup.make("123-0", 64, root)
    assert made == cgroup.SlotCgroup(root / "autograder" / "123-0", root / "autograder" / "123-0", True)
    assert not (root / "autograder" / "999999999-0").exists()
    for folder in (root, root / "autograder"):
        assert (folder / "cgroup.subtree_control").read_text() == "+pids +memory"
    assert (made.pids / "pids.max").read_text() == "64"
    (made.memory / "memory.swap.max").write_text("max")
    (made.memory / "memory.current").write_text("1000")
    assert made.bound_memory(24)
    assert (made.memory / "memory.max").read_text() == "1024"
    assert (made.memory / "memory.swap.max").read_text() == "0"  # memory, not swap
    made.unbound_memory()
    assert (made.memory / "memory.max").read_text() == "max"


def test_v2_without_a_memory_controller_bounds_processes_only(tmp_path):
    made = cgroup.make("1-0", 8, _v2(tmp_path / "cg", "cpu pids"))
    assert made is not None and made.memory is None and not made.bound_memory(1)
    assert cgroup.make("1-0", 8, _v2(tmp_path / "other", "cpu memory")) is None  # no pids: no cgroup at all


def test_v1_uses_the_pids_and_memory_hierarchies_and_bounds_swap_with_memory(tmp_path):
    root = tmp_path / "cg"
    for controller in ("pids", "memory"):
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")
    made = cgroup.make("7-1", 32, root)
    assert made.pids == root / "pids" / "autograder" / "7-1" and made.memory == root / "memory" / "autograder" / "7-1"
    assert made.folders == [made.pids, made.memory]
    (made.memory / "memory.usage_in_bytes").write_text("500")
    memsw = made.memory / "memory.memsw.limit_in_bytes"
    memsw.write_text("-1")
    assert made.bound_memory(100)
    assert (made.memory / "memory.limit_in_bytes").read_text() == memsw.read_text() == "600"
    made.unbound_memory()
    assert (made.memory / "memory.limit_in_bytes").read_text() == memsw.read_text() == "-1"


def test_no_cgroups_where_there_are_none(tmp_path):
    assert cgroup.make("1-0", 8, tmp_path / "absent") is None


CHILD = r'''
import os, select, sys, time
path, size = sys.argv[1], 300 * 2**20
with open(path, "wb") as f:  # page cache charged to this cgroup: the kernel may reclaim it for anything
    for _ in range(512):
        f.write(b"\x02" * 2**20)
print("CACHED", flush=True)
sys.stdin.readline()
ready_r, ready_w = os.pipe()
children = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        held = bytearray(b"\x01") * size  # written, so resident
        os.write(ready_w, bytes([i]))
        time.sleep(30)
        os._exit(0)
    children.append(pid)
os.close(ready_w)
ready, gone, deadline = set(), set(), time.monotonic() + 10
while time.monotonic() < deadline and ready | gone != set(range(3)):
    if select.select([ready_r], [], [], 0.1)[0]:
        ready |= set(os.read(ready_r, 8))
    gone |= {i for i, pid in enumerate(children) if i not in gone and os.waitpid(pid, os.WNOHANG)[0]}
print("HELD", len(ready - gone), flush=True)
for i, pid in enumerate(children):
    if i not in gone:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
'''


def test_the_real_hierarchy_bounds_forked_children_however_much_page_cache_the_worker_was_charged(tmp_path):
    """On this machine's own hierarchy (v1's memory controller, or v2): a process whose cgroup was charged
    512 MiB of page cache before the bound was measured, then forks three children of 300 MiB each under a
    bound of 256 MiB beyond it: the cache is not room for them (the kernel reclaims it), so at most one
    holds its memory at once."""
    import os
    import subprocess
    import sys

    import pytest

    if os.geteuid() != 0:
        pytest.skip("makes cgroups: needs root")
    made = cgroup.make(f"{os.getpid()}-test", 64)
    if made is None or made.memory is None:
        pytest.skip("no memory controller to be had here")
    child = None
    try:
        made.unbound_memory()
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "cache")], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, preexec_fn=made.enter)
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "CACHED"
        stat = dict(line.split() for line in (made.memory / "memory.stat").read_text().splitlines())
        assert int(stat.get("file", stat.get("total_cache", 0))) >= 256 * 2**20, "the cache was charged elsewhere"
        assert made.bound_memory(256 * 2**20)
        child.stdin.write("go\n")
        child.stdin.flush()
        out, _ = child.communicate(timeout=60)
        held = [line for line in out.splitlines() if line.startswith("HELD")]
        assert child.returncode != 0 or (held and int(held[0].split()[1]) <= 1), (child.returncode, out)
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        made.unbound_memory()
        made.remove()


def test_the_bound_leaves_out_the_page_cache_beyond_file_cache_on_either_hierarchy(tmp_path, monkeypatch):
    """v1 names the cache total_cache (shmem within it), v2 file (shmem within it): either way, what the kernel
    can reclaim is no room for a job, beyond FILE_CACHE."""
    monkeypatch.setattr(cgroup, "FILE_CACHE", 100)
    v2 = cgroup.make("3-0", 8, _v2(tmp_path / "two"))
    (v2.memory / "memory.current").write_text("5000")
    (v2.memory / "memory.stat").write_text("anon 1000\nfile 3500\nshmem 500\n")
    assert v2.bound_memory(10)
    assert (v2.memory / "memory.max").read_text() == str(5000 - (3000 - 100) + 10)
    root = tmp_path / "one"
    for controller in ("pids", "memory"):
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")
    v1 = cgroup.make("3-1", 8, root)
    (v1.memory / "memory.usage_in_bytes").write_text("5000")
    (v1.memory / "memory.stat").write_text("cache 3500\nrss 1000\nshmem 500\ntotal_cache 3500\ntotal_shmem 500\n")
    assert v1.bound_memory(10)
    assert (v1.memory / "memory.limit_in_bytes").read_text() == str(5000 - (3000 - 100) + 10)


def test_v1_without_swap_accounting_does_not_swap_the_slot(tmp_path):
    """Without memory.memsw (swap accounting off), swap would be room beyond the limit: swappiness 0 instead."""
    root = tmp_path / "cg"
    for controller in ("pids", "memory"):
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")
    made = cgroup.make("8-1", 32, root)
    (made.memory / "memory.usage_in_bytes").write_text("500")
    (made.memory / "memory.swappiness").write_text("60")
    assert made.bound_memory(100)
    assert (made.memory / "memory.limit_in_bytes").read_text() == "600"
    assert (made.memory / "memory.swappiness").read_text() == "0"
