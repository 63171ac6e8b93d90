"""Honest answers that Jupyter runs score as Jupyter runs them (issue 29 §6): a `.py` in Latin-1 with its PEP 263
coding line, an answer cell under `%%capture`, `%timeit -n 3 -r 1 model(x)`. The end-to-end test goes through the
real command line (`autograder grade`, sandboxed where bubblewrap works, two slots); the others read one piece
each, in this process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.harness import _magic_statement, load_answer
from autograder.intake.cells import cell_magic, notebook_code, python_of_cell
from autograder.intake.submission import SubmissionError, answer_code
from autograder.reference_store import known_submissions
from tests.adversarial.test_honest_answers import notebook  # the exercise notebook with these answer cells
from tests.conftest import ROOT, solution_code

EXERCISE = "residual_add"
SOLUTION = solution_code(EXERCISE)
BROKEN = known_submissions(EXERCISE).broken
TIMED = ("\nmodel = ResidualBlock(4)\nx = torch.randn(2, 4, 5, 5)\n%timeit -n 3 -r 1 model(x)\n"
         "%time -- model(x)\ny = %time model(x)\nassert y.shape == x.shape\n")
"""Lines a learner adds to time the block, options and all (`%time`'s value is the expression's, as IPython's)."""




def latin1_py(code: str) -> bytes:
    """The answer as a Latin-1 file that says so, with letters outside ASCII in a comment and a string."""
    text = "# -*- coding: latin-1 -*-\n# Réponse de Zoé: le bloc résiduel\nNOTE = 'déjà vu'\n" + code
    return text.encode("latin-1")


FILES: dict[str, str | bytes] = {
    "latin1.py": latin1_py(SOLUTION),
    "capture.ipynb": notebook("%%capture\n" + SOLUTION + "\nprint('hidden by capture')\n"),
    "capture_named.ipynb": notebook("%%capture captured\n" + SOLUTION + "\nprint('kept for later')\n",
                                    "assert 'kept for later' in captured.stdout\n"),
    "timed.ipynb": notebook(SOLUTION + TIMED),
    "broken.ipynb": notebook(BROKEN),
    "broken_timed.ipynb": notebook(BROKEN + TIMED),
    "broken_captured.ipynb": notebook("%%time\n" + BROKEN),
    "unknown_coding.py": b"# coding: no-such-encoding\n" + SOLUTION.encode(),
    "not_in_its_coding.py": b"# coding: ascii\n# caf\xc3\xa9\n" + SOLUTION.encode(),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("class")
    for name, content in FILES.items():
        path = folder / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    out = folder / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(folder), "--exercise", EXERCISE,
                           "--out", str(out), "--jobs", "2", "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return {name: json.loads((out / name / "results.json").read_text()) for name in FILES}


@pytest.mark.slow
def test_what_jupyter_runs_scores_as_jupyter_runs_it(graded):
    marks = {name: (r["status"], r["score"]) for name, r in graded.items()}
    for name in ("latin1.py", "capture.ipynb", "capture_named.ipynb", "timed.ipynb"):
        assert marks[name] == ("passed", 10), (name, graded[name]["output"], graded[name]["tests"])
    # the timing lines change nothing: the broken answer scores, check by check, as it does without them
    def checks(name: str) -> list[tuple[str, str, float]]:
        return [(t["name"], t["status"], t["score"]) for t in graded[name]["tests"]]

    assert marks["broken.ipynb"][0] == "failed"
    assert checks("broken_timed.ipynb") == checks("broken.ipynb") == checks("broken_captured.ipynb")


@pytest.mark.slow
def test_a_coding_line_python_cannot_read_gets_a_clear_verdict(graded):
    unknown, mismatch = graded["unknown_coding.py"], graded["not_in_its_coding.py"]
    assert (unknown["status"], mismatch["status"]) == ("malformed", "malformed")
    assert "unknown_coding.py" in unknown["output"] and "no-such-encoding" in unknown["output"]
    assert "not_in_its_coding.py" in mismatch["output"] and "ascii" in mismatch["output"]
    assert "line 2" in mismatch["output"]


def test_a_py_file_is_decoded_as_python_decodes_it(tmp_path):
    path = tmp_path / "latin1.py"
    path.write_bytes(latin1_py("x = 1\n"))
    answer = answer_code(path)
    assert "Zoé" in answer.code and "déjà vu" in answer.code
    namespace, error = load_answer(answer.code)
    assert error is None and namespace["NOTE"] == "déjà vu"
    plain = tmp_path / "plain.py"
    plain.write_bytes(b"x = '\xe9'\n")  # no coding line: UTF-8, as Python reads it, and this is not
    with pytest.raises(SubmissionError, match="not UTF-8"):
        answer_code(plain)


def test_line_magics_options_are_read_as_ipython_reads_them():
    assert _magic_statement("timeit", "-n 3 -r 1 model(x)") == "model(x)"
    assert _magic_statement("timeit", "-n3 -r1 -o f(a, b)") == "f(a, b)"
    assert _magic_statement("prun", "-l 3 -s cumulative train()") == "train()"
    assert _magic_statement("time", "--no-raise-error total = f(1)") == "total = f(1)"
    assert _magic_statement("time", "total = f(1)") == "total = f(1)"  # no option: the line as it is


def test_cell_magics_that_run_python_run_it_where_jupyter_does():
    cells = ["\n%%capture out\nprint('inside')\nx = 1", "%%time\ny = x + 1", "%%timeit -n 1 -r 1 z = 10\nw = z + y",
             "%%prun -q\nv = w * 2", "%%writefile notes.txt\nnot python at all"]
    namespace, error = load_answer(notebook_code(cells))
    assert error is None, error
    assert (namespace["x"], namespace["y"], namespace["w"], namespace["v"]) == (1, 2, 12, 24)
    assert namespace["out"].stdout == "inside\n"
    assert cell_magic(cells[0]) == ("capture", "out", "print('inside')\nx = 1")
    assert cell_magic("x = 1\n%%time") is None


def test_an_error_in_a_magics_body_is_at_its_line_of_the_answer():
    code = notebook_code(["import math", "\n%%capture\nfine = 1\nraise ValueError('here')"])
    _, error = load_answer(code)
    assert error is not None and error.type == "ValueError"
    lines = code.split("\n")
    assert lines[error.line - 1] == "raise ValueError('here')", (error, lines)
    _, error = load_answer(notebook_code(["%time x = (", "y = 2"]))
    assert error is not None and error.type == "SyntaxError" and error.line == 1


def test_ipython_keeps_line_numbers_of_a_cell_with_blank_lines_above():
    cell = "\n\n%time a = 1\nb = undefined_name"
    assert len(python_of_cell(cell).split("\n")) == len(cell.split("\n"))
    _, error = load_answer(cell)
    assert error is not None and error.type == "NameError" and error.line == 4
