"""A Chinese reader's whole path in the notebooks: each Chinese solution notebook runs from top to bottom (only
cells tagged raises-exception may raise), and nothing the course prints in it is an English sentence.

What counts as the course's words: every output of a cell but the errors PyTorch raises (a cell's error output,
and PyTorch's messages the course quotes as they are: learners search for them). A line of output is English
where, once code spans, quoted values, paths and PyTorch's own messages are taken out, three English words
follow one another.
"""

from __future__ import annotations

import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from tests.conftest import ROOT

CHINESE_SOLUTIONS = sorted((ROOT / "solutions" / "zh").glob("[0-9][0-9]_*.ipynb"))
ENGLISH_RUN = re.compile(r"\b[A-Za-z][a-z]+(?:[ -]+[A-Za-z][a-z]+){2,}\b")
PYTORCH = [re.compile(r"one of the variables needed for gradient computation.*", re.S), INPLACE_ERROR,
           LEAF_INPLACE_ERROR, re.compile(r"(which is output \d+ of \w+, )?is at version \d+; expected version \d+.*"),
           re.compile(r"Error detected in \w+\..*"),
           # not the course's words but a program's: the capstone's training script (code the learner debugs,
           # written by %%writefile) logs its steps
           re.compile(r"^step\s+\d+\s+loss\s+\S+\s+val accuracy\s+\S+$"),
           re.compile(r"(a leaf Variable that requires grad|Output \d+ of \w+ is a view|This view is).*"),
           re.compile(r"Traceback of forward call.*", re.S), re.compile(r"Hint: .*"),
           # the part of a view's error the course quotes inside its own Chinese sentence (predict.reveal())
           re.compile(r"is a view and is being modified inplace[^）)]*")]


def english_runs(line: str) -> list[str]:
    """The runs of English words in one line of output, once code spans, quoted values, paths and PyTorch's own
    messages are taken out."""
    plain = line
    for pattern in PYTORCH:
        plain = pattern.sub(" ", plain)
    plain = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\S*[/_.()\[\]=<>]\S*", " ", plain)
    return [m.group() for m in ENGLISH_RUN.finditer(plain)]


def english_lines(text: str) -> list[str]:
    """The lines of `text` that hold an English sentence of the course's."""
    return [line for line in text.splitlines() if english_runs(line)]


def test_the_scan_finds_english_and_lets_pytorch_be():
    assert english_lines("检查通过。\nSee the failed checks below for what to fix.") == [
        "See the failed checks below for what to fix."]
    assert not english_lines("RuntimeError: one of the variables needed for gradient computation has been modified "
                             "by an inplace operation: [torch.FloatTensor [4]] is at version 1; expected version 0")
    assert not english_lines("形状为 `torch.Size([2, 3])`，梯度 tensor([1., 2.])")


@pytest.mark.parametrize("path", CHINESE_SOLUTIONS, ids=lambda p: p.stem)
def test_a_chinese_notebook_runs_and_says_nothing_in_english(path, tmp_path, monkeypatch):
    """The solution notebook, in the language a Chinese exercise notebook's setup cell chooses (a solution
    notebook has no setup cell: its kernel is given the language)."""
    monkeypatch.setenv("COURSE_LANGUAGE", "zh")
    work = tmp_path / path.name
    shutil.copy(path, work)
    nb = nbformat.read(work, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert_it_said_only_chinese(nb, path.name)


def assert_it_said_only_chinese(nb, name: str) -> None:
    """An executed notebook raised nothing outside cells tagged raises-exception, and no line of its output (but
    PyTorch's errors) holds an English sentence of the course's. Also used on the Chinese exercise pages the
    book's build ran (tests/test_book.py)."""
    english, raised = [], []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                if "raises-exception" not in cell.metadata.get("tags", []):
                    raised.append(f"cell {index}: {output.ename}: {output.evalue[:200]}")
                continue
            text = output.get("text", "") if output.output_type == "stream" else \
                output.get("data", {}).get("text/plain", "")
            english += [f"cell {index}: {line}" for line in english_lines(text)]
    assert not raised, "\n".join(raised)
    assert not english, f"{name}: the course said English:\n" + "\n".join(english[:30])
