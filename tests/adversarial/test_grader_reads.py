"""The grader never follows what a submission made: it reads no file of the sandbox, only its worker's
pipe, with bounds, so links, FIFOs and devices planted where its files used to be change nothing; and
inside the sandbox the submission's user cannot read the host's files."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.adversarial.conftest import grade_files, needs_sandbox
from tests.conftest import ROOT, solution_code

SOLUTION = solution_code("residual_add")
SECRET = f"host-secret-{uuid.uuid4().hex}"

PLANT = '''
import os
targets = ["/etc/shadow", "/proc/self/cwd", "/proc/1/cmdline", "/dev/zero", {secret_file!r}]
for folder in (os.getcwd(), "/tmp", os.path.dirname(os.getcwd())):
    for i, name in enumerate(["report.json", "stdout.txt", "observations.safetensors", "job.json", "ready"]):
        path = os.path.join(folder, name)
        try:
            if i % 2:
                os.mkfifo(path)
            else:
                os.symlink(targets[i % len(targets)], path)
        except OSError:
            pass
'''
FLOOD = '''
import os
for fd in range(0, 64):
    try:
        os.write(fd, b'{"status": "exited", "code": 0, "report": 0, "stdout": 0, "clean": true}\\n')
    except OSError:
        pass
'''
ATTACKS = {
    "plants links and FIFOs where files were read": "{plant}" + SOLUTION,
    "plants them and exits": "{plant}import os\nos._exit(0)\n",
    "writes protocol lines on every descriptor": FLOOD + SOLUTION,
    "floods its report pipe": "import os\nfor _ in range(80):\n    os.write(3, b'x' * 2**20)\n" + SOLUTION,
    "floods its output": "import os\nfor _ in range(200):\n    os.write(1, b'y' * 2**20)\n" + SOLUTION,
}
HOST_FILES = '''
import os
assert os.getuid() != 0 or not {sandboxed}, "runs as root"
for path in ("/etc/shadow", {secret_file!r}, {root!r} + "/references", {root!r} + "/solutions", {root!r} + "/tests"):
    assert not os.path.exists(path) or not os.access(path, os.R_OK), path
'''


@pytest.fixture(scope="module")
def graded(pool, tmp_path_factory):
    secret = tmp_path_factory.mktemp("host") / "secret.txt"
    secret.write_text(SECRET)
    os.chmod(secret, 0o600)
    files = {}
    for i, code in enumerate(ATTACKS.values()):
        files[f"attack_{i:02d}.py"] = code.replace("{plant}", PLANT.format(secret_file=str(secret)))
        files[f"honest_{i:02d}.py"] = SOLUTION
    files["host_files.py"] = SOLUTION + HOST_FILES.format(sandboxed=True, secret_file=str(secret), root=str(ROOT))
    folder = tmp_path_factory.mktemp("reads")
    return grade_files(pool, folder, folder / "out", files, "residual_add")


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_planted_files_and_floods_change_nothing(graded, attack):
    i = list(ATTACKS).index(attack)
    result, honest = graded[f"attack_{i:02d}.py"], graded[f"honest_{i:02d}.py"]
    assert honest["status"] == "passed", honest["output"]
    text = str(result)
    assert SECRET not in text and "root:" not in text
    assert len(text) < 100_000  # floods are cut to their bounds
    if "exits" in attack or "floods its report" in attack:
        assert result["status"] == "crashed" and result["score"] == 0, result["output"]
    if "floods its output" in attack:
        assert result["status"] == "passed" and len(result["stdout"]) <= 4000


@needs_sandbox
def test_the_submissions_user_cannot_read_host_files(graded):
    result = graded["host_files.py"]
    assert result["status"] == "passed", result["output"]
