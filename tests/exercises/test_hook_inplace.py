"""hook_inplace: its own tests. Its catalogue of known submissions (BROKEN, CORRECT, WRONG) is in
references/hook_inplace.py, and tests/exercises/test_catalogue.py grades every entry."""

import traceback

import pytest
import torch
from torch import nn

from autograder.exercises import get
from autograder.exercises.hook_inplace import HOOK_VIEW_ERROR
from autograder.intake.submission import answer_code
from autograder.reference_store import known_submissions
from tests.conftest import EXERCISE_NOTEBOOKS, failing

ID = "hook_inplace"
KNOWN = known_submissions(ID)
RELU_LINE = "x = self.relu(self.target(x))"


def output_of(result, check):
    return next(t.output for t in result.tests if t.name == check)


def line_of(code: str, text: str) -> int:
    (number,) = [i for i, line in enumerate(code.splitlines(), 1) if line.strip() == text]
    return number


def test_the_report_fails_in_forward_at_the_relu_line(grade):
    result = grade(ID, KNOWN.broken)
    assert result.score == 0  # the scores without a hook are right, and not counted while the hook's error stays
    assert failing(result) == {c.name for c in get(ID).checks}
    assert output_of(result, "forward").startswith("Not counted yet: ")
    said = output_of(result, "backward runs")
    assert f"line {line_of(KNOWN.broken, RELU_LINE)} of your answer (`{RELU_LINE}`)" in said  # the culprit
    assert "Output 0 of BackwardHookFunction is a view and is being modified inplace" in said
    assert "What it means:" in said and "out of place" in said and "clone()" in said


def test_the_error_is_raised_in_forward_by_the_write():
    """What the exercise rests on, on this torch: the write into the hooked layer's output raises, before
    backward, in torch.relu_ called from the line of the model; no version counter is involved."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True))
    model[0].register_full_backward_hook(lambda module, grad_input, grad_output: None)
    with pytest.raises(RuntimeError) as info:
        model(torch.randn(1, 3, 5, 5))
    assert HOOK_VIEW_ERROR.search(str(info.value))
    assert "version" not in str(info.value)
    assert traceback.extract_tb(info.value.__traceback__)[-1].line == "result = torch.relu_(input)"


def test_a_failure_on_hidden_inputs_names_the_scenario_and_hides_the_message_and_line(grade):
    """The in-place ReLU only for batches of more than 2: the public inputs (a batch of 2) pass, the hidden
    ones do not. The feedback says what kind of error it was, on which scenario and what to change; not the
    message, nor the line, which the public trials never met with an error (a hidden input could pick it)."""
    line = "x = self.relu(self.target(x)) if x.shape[0] > 2 else torch.relu(self.target(x))"
    code = KNOWN.broken.replace(f"        {RELU_LINE}\n", f"        {line}\n")
    result = grade(ID, code)
    assert grade(ID, code, public_only=True).score == 9
    said = output_of(result, "backward runs")
    assert "on hidden inputs: scenario '" in said and f"line {line_of(code, line)} of your answer" not in said
    assert "make the activation after model.target out of place" in said
    assert "its message is not shown" in said and "BackwardHookFunction" not in said


@pytest.mark.filterwarnings("ignore:Using a non-full backward hook")
def test_the_deprecated_hook_is_named_and_its_heatmap_is_wrong(grade):
    """register_backward_hook silences the error: its gradient is right, but the forward hook's activation
    was overwritten by the in-place ReLU."""
    code, _ = KNOWN.wrong["deprecated register_backward_hook"]
    result = grade(ID, code)
    assert result.score == 0  # the model still breaks every full backward hook (the grader's own one)
    for name in ("captured gradient", "forward"):  # right, but not counted
        assert output_of(result, name).startswith("Not counted yet: ")
    assert "register_backward_hook, the deprecated non-full hook" in output_of(result, "full backward hook")
    assert "`heatmap` differs" in output_of(result, "heatmap")


def test_watching_the_hooks_leaves_torch_alone(grade):
    assert grade(ID, KNOWN.correct["torch.relu out of place"]).score == 10
    assert nn.Conv2d.register_full_backward_hook is nn.Module.register_full_backward_hook
    assert "register_full_backward_hook" not in vars(nn.Conv2d(1, 1, 1))


def test_the_starter_is_not_attempted(grade):
    result = grade(ID, answer_code(EXERCISE_NOTEBOOKS / "09_hook_inplace.ipynb").code)
    assert result.status == "not_attempted" and result.score == 0
