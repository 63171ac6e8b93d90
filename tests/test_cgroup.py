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
