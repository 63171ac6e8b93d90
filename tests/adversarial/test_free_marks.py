"""Free marks: a submission that copies the course's answer, patches the grader, or forges the worker's
report scores nothing, on every exercise, and the honest classmate graded after it on the same worker
still gets full marks."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import EXERCISES, broken_code, grade_files, needs_sandbox
from tests.conftest import solution_code

FORGE = '''
import os
from autograder.runner import wire
frame = wire.pack({"load_error": None, "problems": {}, "outcomes": {}}, {})
for fd in range(3, 64):
    try:
        os.write(fd, TOKEN + frame)
    except OSError:
        pass
os._exit(0)
'''

READ_REFERENCES = """
import os, sys, autograder
places = set()
for p in [*sys.path, os.path.dirname(os.path.dirname(autograder.__file__)), os.getcwd(), "/"]:
    while p not in ("/", ""):
        places.add(os.path.join(p, "references", "{id}.py"))
        p = os.path.dirname(p)
for path in places:
    if os.path.exists(path):
        exec(open(path).read())
"""

ATTACKS = {
    # name: code, where {id} and {names} stand for the exercise's id and the names it defines
    "imports the course's answer": "from autograder.exercises.{id} import *\n"
                                   "from autograder.exercises.{id} import {names}\n",
    "loads the references from the package": "from autograder.reference_store import load_reference\n"
                                             "globals().update(load_reference('{id}'))\n",
    "reads the references from the repository": READ_REFERENCES,
    "forges a report with no token": FORGE.replace("TOKEN", "b''"),
    "forges a report with a guessed token": FORGE.replace("TOKEN", "bytes(32)"),
    "only patches the grader": "import autograder.harness as h\nh.symbol_problems = lambda *a, **k: {}\n"
                               "h.run_trials = lambda *a, **k: {}\n",
    "swaps a grader module in sys.modules": "import sys, types\n"
                                            "sys.modules['autograder.harness'] = types.ModuleType('x')\n",
    "reads the token from the garbage collector": "import gc\nfor o in gc.get_objects():\n    pass\n",
    "reads the token from other threads' frames": "import sys\nsys._current_frames()\n",
    "reads the token from memory": "open('/proc/self/mem', 'rb')\n",
    "reads the token through a link to /proc": "import os\nos.symlink('/proc/self/mem', 'm')\nopen('m', 'rb')\n",
    "reads memory with ctypes": "import ctypes\nctypes.string_at(id(1), 8)\n",
    "traces the grader": "import sys\nsys.settrace(lambda *a: None)\n",
}
KEEPS_THE_BUG = {
    "patches the grader's harness": "\nimport autograder.harness as h\n_run = h.run_trials\n"
                                    "h.run_trials = lambda *a, **k: {}\n",
    "patches the grader's probes": "\nimport autograder.probes as p\np.observe_grads = lambda *a, **k: None\n",
    "patches the wire": "\nimport autograder.runner.wire as w\nw.encode_report = lambda r: b''\n",
    "patches a grader class": "\nfrom autograder.core.outcome import Outcome\n"
                              "Outcome.__init__ = lambda self, *a, **k: None\n",
    "patches a grader function's code": "\nimport autograder.harness as h\n"
                                        "h.run_trial.__code__ = (lambda *a, **k: {}).__code__\n",
    "patches json": "\nimport json\njson.dumps = lambda *a, **k: '{}'\n",
}


def _names(exercise) -> str:
    return ", ".join(s.name for s in exercise.defines)


@pytest.fixture(scope="module")
def graded(pool, tmp_path_factory):
    """Every attack on every exercise, on one worker, then that exercise's solution."""
    results = {}
    for exercise in EXERCISES.values():
        files = {}
        for i, template in enumerate(ATTACKS.values()):
            files[f"attack_{i:02d}.py"] = template.replace("{id}", exercise.id).replace("{names}", _names(exercise))
        for i, patch in enumerate(KEEPS_THE_BUG.values()):
            files[f"bug_{i:02d}.py"] = broken_code(exercise.id) + patch
        files["broken.py"] = broken_code(exercise.id)
        files["honest.py"] = solution_code(exercise.id)
        folder = tmp_path_factory.mktemp(exercise.id)
        results[exercise.id] = grade_files(pool, folder, folder / "out", files, exercise.id)
    return results


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_the_honest_classmate_after_the_attacks_gets_full_marks(graded, exercise):
    honest = graded[exercise]["honest.py"]
    assert honest["score"] == honest["max_score"], honest["output"]


NEEDS_SANDBOX = {"reads the references from the repository"}
"""Unsandboxed (trusted code only, as the README says), the repository is in reach."""


@pytest.mark.parametrize("attack", [pytest.param(a, marks=needs_sandbox) if a in NEEDS_SANDBOX else a for a in ATTACKS])
@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_an_attack_scores_nothing(graded, exercise, attack):
    result = graded[exercise][f"attack_{list(ATTACKS).index(attack):02d}.py"]
    assert result["score"] == 0, (result["status"], result["output"])
    assert result["status"] in {"failed", "crashed"}, (result["status"], result["output"])


@pytest.mark.parametrize("attack", list(KEEPS_THE_BUG))
@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_keeping_the_bug_and_patching_the_grader_earns_nothing_more(graded, exercise, attack):
    result = graded[exercise][f"bug_{list(KEEPS_THE_BUG).index(attack):02d}.py"]
    assert result["score"] <= graded[exercise]["broken.py"]["score"], result["output"]
    assert result["score"] < result["max_score"]


def test_tampering_is_named_in_the_feedback(graded):
    result = graded["residual_add"]["bug_00.py"]  # patches the grader's harness
    assert "replaced parts of the grader" in result["output"] and "autograder.harness.run_trials" in result["output"]
    forged = graded["residual_add"][f"attack_{list(ATTACKS).index('forges a report with a guessed token'):02d}.py"]
    assert forged["status"] == "crashed" and "did not come from the grader's harness" in forged["output"]
