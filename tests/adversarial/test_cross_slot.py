"""Reach across submissions: nothing one job does on a worker reaches the next job on it. Each attack is
followed, on the same single worker, by a spy (the solution plus asserts that it sees nothing of the
attack: a failed assert costs it its marks) and an honest classmate."""

from __future__ import annotations

import uuid

import pytest

from tests.adversarial.conftest import SANDBOXED, grade_files, needs_sandbox
from tests.conftest import solution_code

SOLUTION = solution_code("residual_add")
MARK = f"planted-{uuid.uuid4().hex}"
"""Unique per run: a name no earlier run on this machine left behind."""

PLANT = f'''
import os, sys
for folder in ("/tmp", os.getcwd(), os.path.expanduser("~")):
    for name in ("sitecustomize.py", "usercustomize.py", "autograder.py", "torch.py", "{MARK}.py"):
        try:
            with open(os.path.join(folder, name), "w") as f:
                f.write("import os; open('/tmp/{MARK}-ran', 'w').write('x')\\n")
        except OSError:
            pass
    try:
        os.makedirs(os.path.join(folder, "autograder"), exist_ok=True)
        open(os.path.join(folder, "autograder", "__init__.py"), "w").write("raise SystemExit")
    except OSError:
        pass
'''
ATTACKS = {
    "plants modules, then kills its worker": PLANT + "import signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "plants modules and returns": PLANT + SOLUTION,
    "fills /tmp past its size": "n = 0\ntry:\n    with open('/tmp/fill', 'wb') as f:\n        while n < 3 * 2**30:\n"
                                "            f.write(b'x' * 2**20)\n            n += 2**20\nexcept OSError:\n    pass\n"
                                "print('wrote', n)\n",
    "leaves folders it may not be asked to remove": "import os\nfor i in range(200):\n"
                                                   "    os.makedirs(f'/tmp/job-{i}/x', exist_ok=True)\n"
                                                   "    os.chmod(f'/tmp/job-{i}/x', 0)\n"
                                                   "    os.chmod(f'/tmp/job-{i}', 0)\n",
    "nests folders thousands deep": "import os\nos.chdir('/tmp')\nfor i in range(3000):\n    os.mkdir('d')\n"
                                    "    os.chdir('d')\n",
    "leaves a process that keeps writing": "import subprocess\nsubprocess.Popen(['sh', '-c', 'while true; do echo x "
                                           ">> /tmp/late; sleep 0.01; done'], start_new_session=True)\n" + SOLUTION,
}
SPY = SOLUTION + f'''
import os, sys
python = [p for p in (*sys.path, sys.executable, sys.prefix) if p.startswith("/tmp/")]  # a venv under /tmp
leftovers = [n for n in os.listdir("/tmp") if (not n.startswith(("job-", "torchinductor_")) or n == "job-0")
             and not any(p.startswith(f"/tmp/{{n}}/") for p in python)] if {SANDBOXED!r} else []
assert leftovers == [], leftovers
assert not os.path.exists("/tmp/{MARK}-ran"), "planted code ran"
assert "sitecustomize" not in sys.modules or "/tmp" not in (sys.modules["sitecustomize"].__file__ or "")
assert not any(p in ("", ".", "/tmp") or p.startswith("/tmp/job-") for p in sys.path), sys.path
'''


@pytest.fixture(scope="module")
def graded(pool, tmp_path_factory):
    files = {}
    for i, code in enumerate(ATTACKS.values()):
        files[f"attack_{i:02d}.py"] = code
        files[f"spy_{i:02d}.py"] = SPY
        files[f"honest_{i:02d}.py"] = SOLUTION
    folder = tmp_path_factory.mktemp("cross")
    return grade_files(pool, folder, folder / "out", files, "residual_add")


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_next_submissions_on_the_worker_see_nothing_of_it(graded, attack):
    i = list(ATTACKS).index(attack)
    for role in ("spy", "honest"):
        result = graded[f"{role}_{i:02d}.py"]
        assert result["status"] == "passed", (role, result["output"])
        assert MARK not in result.get("stdout", "")


@needs_sandbox
def test_scratch_space_has_a_size(graded):
    result = graded[f"attack_{list(ATTACKS).index('fills /tmp past its size'):02d}.py"]
    written = int(result["stdout"].split("wrote")[1].split()[0])
    assert written < 2**30  # 3 GiB asked for, under a 1 GiB memory limit: the scratch's own size stopped it


def test_an_attack_that_kills_its_worker_gets_its_own_verdict(graded):
    result = graded["attack_00.py"]
    assert result["status"] == "crashed" and result["score"] == 0
