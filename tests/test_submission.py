"""Reading submissions: every broken file gets its own clear message."""

import json

import nbformat
import pytest

from autograder.submission import SubmissionError, answer_code


def notebook(cells, exercise="residual_add"):
    nb = nbformat.v4.new_notebook()
    nb.metadata["autograder"] = {"exercise": exercise}
    nb.cells = cells
    return nb


def answer(source):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["answer"]
    return cell


def test_answer_cells_in_order_with_exercise_from_metadata(tmp_path):
    path = tmp_path / "s.ipynb"
    nbformat.write(notebook([answer("a = 1"), nbformat.v4.new_code_cell("ignored = 1"), answer("b = a")]), path)
    result = answer_code(path)
    assert result.exercise == "residual_add"
    assert "a = 1" in result.code and "b = a" in result.code and "ignored" not in result.code


def test_magics_are_commented_out(tmp_path):
    path = tmp_path / "s.ipynb"
    nbformat.write(notebook([answer("%timeit 1\n!ls\nx = 1")]), path)
    code = answer_code(path).code
    compile(code, "x", "exec")
    assert "# (notebook magic, not graded) %timeit" in code


def test_py_file_is_one_answer_cell(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("x = 1\n")
    assert answer_code(path).code == "x = 1\n" and answer_code(path).exercise is None


@pytest.mark.parametrize(
    "content, words",
    [
        ("", "empty"),
        ("{not json", "not valid notebook JSON"),
        (json.dumps({"cells": "nope"}), "not a valid notebook"),
        (nbformat.writes(notebook([])), "no cells"),
        (nbformat.writes(notebook([nbformat.v4.new_code_cell("x = 1")])), "no answer cells"),
    ],
)
def test_broken_notebooks_get_a_clear_message(tmp_path, content, words):
    path = tmp_path / "s.ipynb"
    path.write_text(content)
    with pytest.raises(SubmissionError, match=words):
        answer_code(path)


def test_binary_and_unknown_files(tmp_path):
    binary = tmp_path / "s.py"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(SubmissionError, match="UTF-8"):
        answer_code(binary)
    other = tmp_path / "s.txt"
    other.write_text("x")
    with pytest.raises(SubmissionError, match=".ipynb notebook or a .py file"):
        answer_code(other)
