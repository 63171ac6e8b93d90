"""`predict(...)` and `predict.reveal()`: the learner's prediction, judged against the failure cell, in a real
IPython shell; and the grader never sees the predict cell."""

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

import autograder
from autograder import predict
from autograder.intake.submission import answer_code, is_answer_cell
from autograder.notebook.predict import CellRun, Prediction, feedback, marks
from tests.conftest import SOLUTIONS

PREFIX = "one of the variables needed for gradient computation has been modified by an inplace operation: "
RELU_2_13 = PREFIX + ("[torch.FloatTensor [2, 4, 8, 8]], which is output 0 of Relu, is at version 1; expected "
                      "version 0 instead. Hint: enable anomaly detection ...")
RELU_OLDER = RELU_2_13.replace("of Relu,", "of ReluBackward0,")
MASK = PREFIX + "[torch.FloatTensor [2, 8, 1]] is at version 2; expected version 1 instead. Hint: ..."


def judged(prediction, message, error="RuntimeError"):
    return {m.part: m.right for m in marks(prediction, CellRun(error, message))}


@pytest.mark.parametrize("message", [RELU_2_13, RELU_OLDER], ids=["torch 2.13", "older"])
@pytest.mark.parametrize("tensor", ["output 0 of Relu", "relu's output", "F.relu", "ReluBackward0", (2, 4, 8, 8)])
def test_a_right_prediction_in_either_wording(message, tensor):
    # The template of a failure at backward has no when= slot: a prediction without one is not judged on it.
    assert judged(Prediction(True, tensor, 1, 0), message) == dict.fromkeys(
        ("raises", "tensor", "found", "expected"), True)
    assert judged(Prediction(True, tensor, 1, 0, when="backward"), message)["when"] is True
    assert judged(Prediction(True, tensor, 1, 0, when="write"), message)["when"] is False


def test_each_wrong_part_is_named_with_what_the_message_said():
    text = feedback(Prediction(True, "output 0 of conv2d", 2, 0), CellRun("RuntimeError", RELU_2_13))
    assert ("tensor    wrong  you said 'output 0 of conv2d'; "
            "it is output 0 of Relu [torch.FloatTensor [2, 4, 8, 8]]") in text
    assert "found     wrong  you said 2; it is 1" in text
    assert "expected  right  it is 0" in text
    assert "3 of 4" not in text and "2 of 4 predicted parts right." in text


@pytest.mark.parametrize("op, said, right", [
    ("LeakyRelu1", "output 0 of leaky_relu_", True), ("LeakyReluBackward1", "F.leaky_relu_", True),
    ("Relu", "leaky_relu", False), ("LeakyRelu1", "relu", False),
    ("AsStrided", "output 0 of AsStrided", True), ("AsStridedBackward0", "as_strided", True),
    ("AsStrided", "weight_hh_l0", False),
])
def test_op_names_match_as_words_not_substrings(op, said, right):
    message = RELU_2_13.replace("of Relu,", f"of {op},")
    assert judged(Prediction(True, said, 1, 0), message)["tensor"] is right


def test_a_tensor_without_grad_fn_is_named_by_its_shape():
    assert judged(Prediction(True, (2, 8, 1), 2, 1), MASK)["tensor"] is True
    assert judged(Prediction(True, "the mask, [2, 8, 1]", 2, 1), MASK)["tensor"] is True
    assert judged(Prediction(True, (2, 8), 2, 1), MASK)["tensor"] is False
    assert judged(Prediction(True, "output 0 of Mul", 2, 1), MASK)["tensor"] is False


def test_no_error_and_other_errors():
    assert judged(Prediction(False), "", error=None) == {"raises": True}
    assert judged(Prediction(True, "relu", 1, 0), "", error=None) == {"raises": False}
    assert judged(Prediction(False), RELU_2_13) == {"raises": False, "tensor": None, "found": None, "expected": None}
    text = feedback(Prediction(True), CellRun("NameError", "name 'block' is not defined"))
    assert "NameError (name 'block' is not defined), not the in-place error" in text and "run the failure cell" in text


def test_an_empty_prediction_still_shows_what_happened():
    text = feedback(Prediction(), CellRun("RuntimeError", RELU_2_13))
    assert "not predicted; it is 1" in text and "Nothing was predicted" in text


def test_placeholders_ask_for_a_prediction_and_bad_values_are_refused(capsys):
    predict(raises=..., tensor=..., found=..., expected=...)
    assert "Fill in your prediction: replace the ... after raises, tensor, found, expected" in capsys.readouterr().out
    predict(raises=False)  # no error predicted: the other parts are not needed
    assert "Prediction noted (raises=False)" in capsys.readouterr().out
    for bad in ({"raises": "yes"}, {"found": 1.0}, {"expected": True}, {"found": -1}, {"tensor": 3}):
        with pytest.raises(TypeError):
            predict(**bad)


def test_predict_and_diagnose_are_guesses_whatever_the_import_order():
    """The package's names are the objects (one class, predict.Guess), however the modules were imported first;
    the modules stay importable for their parts."""
    import importlib
    import subprocess
    import sys

    module = importlib.import_module("autograder.notebook.predict")
    assert autograder.predict is predict is module.predict and "predict" in autograder.__all__
    assert type(autograder.diagnose) is type(predict) is module.Guess and callable(predict.reveal)
    for first in ("import autograder.notebook.lesson", "import autograder.notebook.diagnose",
                  "import autograder.notebook.predict", "pass"):
        code = (f"{first}\nfrom autograder import diagnose, predict\nfrom autograder.notebook.predict import Guess\n"
                "assert isinstance(predict, Guess) and isinstance(diagnose, Guess)\n"
                "import sys; assert 'torch' not in sys.modules")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (first, done.stderr)


@pytest.fixture
def shell(monkeypatch):
    """A real IPython shell (cells run as in Jupyter), with a fresh watch; removed afterwards so that
    `get_ipython()` in later tests of this process finds none."""
    import importlib

    module = importlib.import_module("autograder.notebook.predict")
    monkeypatch.setattr(module, "_watch", module._Watch())
    shell = InteractiveShell.instance()
    yield lambda source: shell.run_cell(source, store_history=True)
    InteractiveShell.clear_instance()


FAILURE = """
import torch
a = torch.randn(3, requires_grad=True)
out = torch.relu(a)
out += 1
out.sum().backward()
"""


def test_reveal_compares_with_the_failure_cell_run_before_it(shell, capsys):
    shell("from autograder import predict")
    shell('predict(raises=True, tensor="output 0 of Relu", found=1, expected=2)')
    shell("predict.reveal()")
    assert "Run the failure cell (just below your prediction) first" in capsys.readouterr().out
    assert shell(FAILURE).error_in_exec is not None
    capsys.readouterr()
    shell("predict.reveal()")
    first = capsys.readouterr().out
    assert "3 of 4 predicted parts right." in first and "expected  wrong  you said 2; it is 0" in first
    shell("predict.reveal()")  # again: still the failure cell, not the first reveal
    assert capsys.readouterr().out == first
    shell("x = 1")
    shell("predict.reveal()")
    assert "it ran without an error" in capsys.readouterr().out


def test_reveal_without_a_prediction_says_what_to_do(shell, capsys):
    shell("from autograder import predict")
    shell(FAILURE)
    capsys.readouterr()
    shell("predict.reveal()")
    assert "No prediction yet" in capsys.readouterr().out


def _with_predict_cell(source):
    """The residual_add solution notebook with its predict cell replaced by `source` (None: removed)."""
    nb = nbformat.read(SOLUTIONS / "03_residual_add.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if "predict" in c.metadata.get("tags", [])]
    if source is None:
        nb.cells.remove(cell)
    else:
        cell.source = source
    return nb


@pytest.mark.parametrize("path", sorted(SOLUTIONS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_predict_cell_is_an_answer_cell(path):
    nb = nbformat.read(path, as_version=4)
    assert not any(is_answer_cell(c) and "predict" in c.metadata.get("tags", []) for c in nb.cells)


def test_the_grader_ignores_the_predict_cell(tmp_path, grade):
    variants = {"as_shipped": _with_predict_cell('predict(raises=..., tensor=..., found=..., expected=...)'),
                "raising": _with_predict_cell('raise RuntimeError("not graded")'),
                "bad_types": _with_predict_cell('predict(raises="maybe", found=1.5)'),
                "missing": _with_predict_cell(None)}
    codes = set()
    for name, nb in variants.items():
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        codes.add(answer_code(tmp_path / f"{name}.ipynb").code)
    assert codes == {answer_code(SOLUTIONS / "03_residual_add.ipynb").code}
    shipped, raising = (grade("residual_add", answer_code(tmp_path / f"{n}.ipynb").code)
                        for n in ("as_shipped", "raising"))
    assert shipped.score == raising.score == shipped.max_score
    assert [(t.name, t.status) for t in shipped.tests] == [(t.name, t.status) for t in raising.tests]


CHUNK = ("Output 0 of SplitBackward0 is a view and its base or another view of its base has been modified inplace. "
         "This view is the output of a function that returns multiple views. Such functions do not allow the "
         "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.")
HOOK = ("Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace. This view was created "
        "inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+"
        "inplace would override the custom backward associated with the custom Function, leading to incorrect "
        "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.")
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


@pytest.mark.parametrize("message", [CHUNK, HOOK, LEAF], ids=["multi-output view", "hook view", "leaf"])
def test_errors_at_the_write_are_judged_on_when_and_name_no_versions(message):
    assert judged(Prediction(True, when="write"), message) == {"raises": True, "when": True}
    assert judged(Prediction(True, when="backward"), message) == {"raises": True, "when": False}
    wrong = judged(Prediction(True, "output 0 of Relu", 1, 0, when="write"), message)
    assert wrong == {"raises": True, "when": True, "tensor": False, "found": False, "expected": False}
    text = feedback(Prediction(True, when="write"), CellRun("RuntimeError", message))
    assert "at the in-place write itself" in text and "2 of 2 predicted parts right." in text


def test_only_the_parts_a_cell_asks_for_are_to_fill_in(capsys):
    predict(raises=..., when=...)
    assert "replace the ... after raises, when with your guesses" in capsys.readouterr().out
    predict(raises=True, when="write")
    assert "Prediction noted (raises=True, when='write')" in capsys.readouterr().out
    with pytest.raises(TypeError, match="when is"):
        predict(raises=True, when="later")


def test_when_is_judged_only_where_the_template_asks_for_it():
    """Nine failure cells' templates have no when= slot: their reveal prints no `when` row to fill in."""
    text = feedback(Prediction(True, "output 0 of Relu", 1, 0), CellRun("RuntimeError", RELU_2_13))
    assert not any(line.split()[:1] == ["when"] for line in text.splitlines()), text
    assert "4 of 4 predicted parts right." in text
    asked = feedback(Prediction(True, "output 0 of Relu", 1, 0, when="write"), CellRun("RuntimeError", RELU_2_13))
    assert "4 of 5 predicted parts right." in asked
