"""A notebook's "Predict first" words name exactly the slots its predict(...) cell has, and the values each
takes; and predict() does what the words say it does with them (leave `when` as it is when you say False)."""

import ast
import contextlib
import io

import nbformat
import pytest

from autograder import predict
from autograder.notebook.predict import WHEN
from tests.conftest import EXERCISE_NOTEBOOKS

# The notebooks whose predict words were rewritten to match their cell; the others list theirs elsewhere.
CHECKED = ["01_leaf_sgd.ipynb"]
SLOTS = ("raises", "when", "tensor", "found", "expected")


def predict_cell_and_words(name: str) -> tuple[list[str], str]:
    nb = nbformat.read(EXERCISE_NOTEBOOKS / name, as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if "predict" in c.metadata.get("tags", []))
    words = next(c.source for c in reversed(nb.cells[:index]) if c.cell_type == "markdown")
    call = next(n for n in ast.walk(ast.parse(nb.cells[index].source))
                if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "predict")
    return [k.arg for k in call.keywords if isinstance(k.value, ast.Constant) and k.value.value is ...], words


@pytest.mark.parametrize("name", CHECKED)
def test_the_words_name_each_slot_of_the_cell_and_no_other(name):
    slots, words = predict_cell_and_words(name)
    assert slots, "the exercise's predict cell has no slot to fill"
    assert [s for s in SLOTS if f"`{s}`" in words] == slots, (slots, words)
    if "when" in slots:
        assert all(f'`"{value}"`' in words for value in WHEN), words


def said(**prediction) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        predict(**prediction)
    return out.getvalue()


def test_predict_takes_false_with_when_left_and_asks_for_when_after_true():
    assert "Prediction noted (raises=False)" in said(raises=False, when=...)
    assert "replace the ... after when" in said(raises=True, when=...)
    assert "Prediction noted" in said(raises=True, when="write")
