"""A worker warmed for one exercise (as a platform's container starts it) has not imported what that
exercise does not need: dynamo, which torch imports at an optimizer's first step and which then rebinds
torch.manual_seed. An honest answer that steps an optimizer anyway is graded as usual; an answer that
puts anything else in torch.manual_seed's place, however much it looks like torch's own wrapper, is
tampering. The honest classmate after them still gets full marks."""

from __future__ import annotations

import pytest

from autograder.runner.limits import Limits
from autograder.runner.pool import WarmPool
from tests.adversarial.conftest import broken_code, grade_files
from tests.conftest import solution_code

EXERCISE = "data_trap"  # its trials step no optimizer: its worker does not load dynamo
STEPS_AN_OPTIMIZER = '''
import sys as _sys
print("dynamo before the step:", "torch._dynamo" in _sys.modules)
import torch as _torch
_p = _torch.zeros(2, requires_grad=True)
_p.sum().backward()
_torch.optim.SGD([_p], lr=0.1).step()
_torch.manual_seed(0)
print("dynamo after the step:", "torch._dynamo" in _sys.modules)
'''
TAMPERING = {
    "a look-alike wrapper": "import functools, torch\n"
                            "torch.manual_seed = functools.wraps(torch.manual_seed)(lambda *a, **k: None)\n",
    "torch's wrapper around its own function": "import functools, torch\n"
                                               "torch.manual_seed = torch._disable_dynamo(functools.wraps("
                                               "torch.manual_seed)(lambda *a, **k: None))\n",
    "torch's wrapper with its target swapped": "import torch\nw = torch._disable_dynamo(torch.manual_seed)\n"
                                              "w.__closure__[w.__code__.co_freevars.index('fn')].cell_contents = "
                                              "lambda *a, **k: None\ntorch.manual_seed = w\n",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    files = {"honest_with_optimizer.py": solution_code(EXERCISE) + STEPS_AN_OPTIMIZER}
    for i, attack in enumerate(TAMPERING.values()):
        files[f"attack_{i:02d}.py"] = broken_code(EXERCISE) + "\n" + attack
    files["broken.py"] = broken_code(EXERCISE)
    files["honest.py"] = solution_code(EXERCISE)
    folder = tmp_path_factory.mktemp("lazy")
    with WarmPool(1, Limits(memory=1024**3), exercises=(EXERCISE,)) as pool:
        return grade_files(pool, folder, folder / "out", files, EXERCISE)


def test_an_honest_answer_that_makes_torch_import_dynamo_gets_full_marks(graded):
    result = graded["honest_with_optimizer.py"]
    assert result["score"] == result["max_score"], result["output"]
    printed = result["teacher_stdout"]
    assert "dynamo before the step: False" in printed and "dynamo after the step: True" in printed, printed


@pytest.mark.parametrize("attack", list(TAMPERING))
def test_anything_else_in_manual_seeds_place_is_tampering(graded, attack):
    result = graded[f"attack_{list(TAMPERING).index(attack):02d}.py"]
    assert "replaced parts of the grader" in result["output"] and "torch.manual_seed" in result["output"], result
    assert result["score"] <= graded["broken.py"]["score"] < result["max_score"]


def test_the_honest_classmate_after_them_gets_full_marks(graded):
    assert graded["honest.py"]["score"] == graded["honest.py"]["max_score"], graded["honest.py"]["output"]
