"""Where the grader cannot have everything it wants, what still holds (the README's "What does not hold" says
what does not):
- no cgroup (a grader that is not root, a platform's container): a job cannot fork, so its memory is its one
  process's, and every exercise's honest answer still gets full marks;
- no namespaces per job (a kernel that refuses unprivileged user namespaces): the pool says so, and still
  kills what a job leaves and grades the next one;
- no bubblewrap (plain processes): jobs still get namespaces of their own, so they cannot reach their worker
  or the jobs after them (they can read what the worker's user can: see the README)."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from autograder.runner import pool as pool_module
from autograder.runner.limits import Limits
from autograder.runner.pool import WarmPool
from tests.adversarial.conftest import EXERCISES, grade_files
from tests.adversarial.test_job_after_job import FORKS, SHM, _slot_processes
from tests.conftest import solution_code

SOLUTION = solution_code("residual_add")
SUBPROCESS = "import subprocess\ntry:\n    subprocess.run(['true'])\n    print('RAN')\nexcept OSError as e:\n" \
             "    print('REFUSED', e)\n"
THREAD = "import threading\ntry:\n    threading.Thread(target=print).start()\n    print('STARTED')\n" \
         "except RuntimeError as e:\n    print('REFUSED', e)\n"


@pytest.fixture(scope="module")
def without_cgroup(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool_module.cgroup, "make", lambda *args, **kwargs: None)
        with WarmPool(1, Limits(memory=1024**3)) as warm:
            files = {f"honest_{e}.py": solution_code(e) for e in EXERCISES}
            files |= {"forks_residual_add.py": FORKS + SOLUTION, "spawns_residual_add.py": SUBPROCESS + SOLUTION,
                      "threads_residual_add.py": THREAD + SOLUTION}
            folder = tmp_path_factory.mktemp("uncontained")
            return grade_files(warm, folder, folder / "out", files), warm._slots[0].memory_bounded


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_without_a_cgroup_honest_answers_get_full_marks(without_cgroup, exercise):
    results, bounded = without_cgroup
    honest = results[f"honest_{exercise}.py"]
    assert not bounded
    assert honest["score"] == honest["max_score"], honest["output"]


def test_without_a_cgroup_a_job_cannot_fork_nor_start_a_thread(without_cgroup):
    results, _ = without_cgroup
    forks, spawns, threads = (results[f"{n}_residual_add.py"]["stdout"] for n in ("forks", "spawns", "threads"))
    assert "FORK REFUSED" in forks and "HELD 0" in forks, forks
    assert "REFUSED" in spawns and "RAN" not in spawns, spawns
    assert "REFUSED" in threads and "STARTED" not in threads, threads


MARK = f"left-by-a-job-{uuid.uuid4().hex}"


def test_where_jobs_share_the_workers_namespaces_the_pool_says_so_and_still_cleans_up(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_module, "WORKER_OPTIONS", ["--shared-namespaces"])
    files = {"leaves.py": SOLUTION + f"\nimport subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 300 # {MARK}'], "
                                     "start_new_session=True)\n", "honest.py": SOLUTION}
    with WarmPool(1, Limits(memory=1024**3)) as warm:
        warm.ready()
        results = grade_files(warm, tmp_path, tmp_path / "out", files, "residual_add")
        assert not warm._slots[0].isolated and "signal or lower the limits of its worker" in warm.warning
    assert [r["status"] for r in results.values()] == ["passed", "passed"]
    assert subprocess.run(["pgrep", "-f", MARK], capture_output=True, text=True).stdout.split() == []


AT_WORKER = """
import resource
done = []
for pid in WORKER:
    try:
        resource.prlimit(pid, resource.RLIMIT_AS, (16, 16))
        done.append(pid)
    except OSError:
        pass
print("LOWERED", done)
"""


@pytest.fixture(scope="module")
def unsandboxed(tmp_path_factory):
    """Plain processes, as where bubblewrap cannot run. The attack aims only at its worker's own processes, by
    their numbers on the host: without a PID namespace, /proc would show it every process of the machine."""
    marker = uuid.uuid4().hex
    with WarmPool(1, Limits(memory=1024**3), sandbox=False) as warm:
        warm.ready()
        before = _slot_processes(warm)
        files = {"limits.py": AT_WORKER.replace("WORKER", repr(sorted(before))) + SOLUTION, "honest.py": SOLUTION,
                 "shm_create.py": SHM.replace("MARK", marker).replace("ARG", "create") + SOLUTION,
                 "shm_find.py": SHM.replace("ARG", "find") + SOLUTION}
        folder = tmp_path_factory.mktemp("unsandboxed")
        results = grade_files(warm, folder, folder / "out", files, "residual_add")
        return results, warm._slots[0].isolated, before, _slot_processes(warm), marker


def test_unsandboxed_jobs_still_get_namespaces_of_their_own(unsandboxed):
    results, isolated, before, after, marker = unsandboxed
    assert isolated
    assert "LOWERED []" in results["limits.py"]["stdout"], results["limits.py"]["stdout"]
    assert results["honest.py"]["status"] == "passed", results["honest.py"]["output"]
    assert {pid: limits for pid, limits in after.items() if pid in before} == before
    assert "CREATED" in results["shm_create.py"]["stdout"], results["shm_create.py"]["stdout"]
    assert "ABSENT" in results["shm_find.py"]["stdout"] and marker not in results["shm_find.py"]["stdout"]
