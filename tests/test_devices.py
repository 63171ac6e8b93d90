"""Device choice is pure logic, tested on the CPU for machines with and without CUDA."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.pipeline import grade_code
from autograder.settings import DeviceError, resolve
from tests.conftest import solution_code


@pytest.mark.parametrize("choice, cuda, devices, warns", [
    ("cpu", True, ("cpu",), False),
    ("auto", False, ("cpu",), False),
    ("auto", True, ("cpu", "cuda"), False),
    ("all", True, ("cpu", "cuda"), False),
    ("all", False, ("cpu",), True),
    ("cuda", True, ("cuda",), False),
])
def test_resolve(choice, cuda, devices, warns):
    got, warning = resolve(choice, cuda)
    assert got == devices and bool(warning) == warns


def test_cuda_without_cuda_is_a_usage_error():
    with pytest.raises(DeviceError, match="no CUDA"):
        resolve("cuda", False)
    with pytest.raises(DeviceError):
        resolve("tpu", True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_solutions_score_full_on_cuda(exercise_id):
    result = grade_code(exercise_id, solution_code(exercise_id), devices=("cpu", "cuda"))
    assert result.score == result.max_score, [(t.name, t.output) for t in result.tests if t.status == "failed"]
