"""Reading submissions: every broken file gets its own clear message."""

import json

import nbformat
import pytest

from autograder.harness import load_answer
from autograder.intake.cells import CELL_BREAK, python_of_cell
from autograder.intake.submission import SubmissionError, answer_code


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
    assert result.declared_exercise == "residual_add"
    assert "a = 1" in result.code and "b = a" in result.code and "ignored" not in result.code


def test_ipython_syntax_becomes_the_calls_jupyter_makes(tmp_path):
    """As IPython reads a cell, not as a pattern would: `!=` continuing a line stays a comparison. The grader
    keeps the cells as written; the harness, where the answer runs, reads them as IPython does."""
    path = tmp_path / "s.ipynb"
    cell = "%timeit y = 1\n!ls\nx = (1\n    != 2)\ntorch.relu?"
    nbformat.write(notebook([answer(cell), answer("z = 3")]), path)
    code = answer_code(path).code
    assert code.splitlines() == [*cell.splitlines(), CELL_BREAK, "z = 3"]
    assert python_of_cell(cell).splitlines() == [
        "get_ipython().run_line_magic('timeit', 'y = 1')", "get_ipython().system('ls')", "x = (1", "    != 2)",
        "get_ipython().run_line_magic('pinfo', 'torch.relu')"]
    namespace, error = load_answer(code)
    assert error is None and (namespace["x"], namespace["y"], namespace["z"]) == (True, 1, 3)


def test_each_answer_cell_is_compiled_on_its_own_and_lines_count_in_the_whole(tmp_path):
    path = tmp_path / "s.ipynb"
    nbformat.write(notebook([answer("import math"), answer("from __future__ import annotations\nx: int = 1"),
                             answer("y = (")]), path)
    namespace, error = load_answer(answer_code(path).code)
    assert namespace["x"] == 1 and "math" in namespace
    assert (error.type, error.line, error.code) == ("SyntaxError", 6, "y = (")


def test_py_file_is_one_answer_cell(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("x = 1\n")
    assert answer_code(path).code == "x = 1\n" and answer_code(path).declared_exercise is None


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
