"""Hidden inputs are not in the worker while the answer loads and runs its public trials: the worker
gets them only after, from its zygote, through its main thread. So what an answer prints or raises before
then cannot hold one, however hard it looks; and an answer that grabs them itself is caught."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import grade_files
from tests.conftest import solution_code

SOLUTION = solution_code("residual_add")
HIDDEN = ("train/", "eval/", "input without grad/")
"""residual_add's hidden scenarios, as they appear in the keys of its inputs."""

LOOK_EVERYWHERE = '''
import sys
seen = []
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if isinstance(value, dict):
            seen += [str(k) for k in value if "/float" in str(k)]
    frame = frame.f_back
print("SEEN", seen)
'''
GRAB = '''
import os
os.write(4, b"H")
size = int.from_bytes(os.read(5, 8), "little")
data = b""
while len(data) < size:
    data += os.read(5, size - len(data))
print("GRABBED", data[:200])
raise RuntimeError(f"hidden: {data[:200]!r}")
'''

REWRITE_PUBLIC = """
import sys

def _rewrite_public_results(x):
    from autograder.core.outcome import ErrorInfo
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            public = getattr(value, "public", None)
            for outcome in getattr(public, "outcomes", {}).values():
                object.__setattr__(outcome, "error", ErrorInfo("RuntimeError", f"LEAK {tuple(x.shape)}", 1, "x"))
        frame = frame.f_back
"""
ON_EVERY_CALL = "        _rewrite_public_results(x)\n"


@pytest.fixture(scope="module")
def graded(pool, tmp_path_factory):
    rewrite = REWRITE_PUBLIC + SOLUTION.replace("    def forward(self, x):\n",
                                                "    def forward(self, x):\n" + ON_EVERY_CALL)
    assert rewrite != REWRITE_PUBLIC + SOLUTION
    files = {"look.py": LOOK_EVERYWHERE + SOLUTION, "grab.py": GRAB + SOLUTION, "rewrite.py": rewrite,
             "honest.py": SOLUTION}
    folder = tmp_path_factory.mktemp("hidden")
    return grade_files(pool, folder, folder / "out", files, "residual_add")


def _student_view(result: dict) -> str:
    return str({k: v for k, v in result.items() if k not in ("teacher_stdout", "grader_traceback")})


def test_what_an_answer_sees_while_loading_holds_no_hidden_input(graded):
    result = graded["look.py"]
    assert result["status"] == "passed"
    assert "SEEN" in result["stdout"] and "public/" in result["stdout"]  # it looked, and saw the public ones
    assert not any(h in _student_view(result) for h in HIDDEN)


def test_an_answer_that_grabs_the_hidden_inputs_is_caught_and_shows_nothing(graded):
    result = graded["grab.py"]
    assert result["score"] == 0 and "hidden inputs was used by your code" in result["output"]
    view = _student_view(result)
    assert "GRABBED" not in view and "hidden: b" not in view and not any(h in view for h in HIDDEN)


def test_the_public_results_cannot_be_rewritten_once_hidden_inputs_are_in(graded):
    """The public phase's report is sealed before the hidden inputs arrive: rewriting it later, from the hidden
    trials' frames, changes nothing."""
    result = graded["rewrite.py"]
    assert result["status"] == "passed" and "LEAK" not in _student_view(result)


def test_the_honest_classmate_after_them_passes(graded):
    assert graded["honest.py"]["status"] == "passed"
