"""The scan that will hold a Chinese reader's whole path in the notebooks to Chinese: nothing the course prints is
an English sentence. Not yet run over the twelve notebooks in the suite: the f-strings the notebooks print are not
in their catalogues yet (README, "Not yet here").

What counts as the course's words: every output of a cell but the errors PyTorch raises (a cell's error output,
and PyTorch's messages the course quotes as they are: learners search for them). A line of output is English
where, once code spans, quoted values, paths and PyTorch's own messages are taken out, three English words
follow one another.
"""

from __future__ import annotations

import re

from autograder.core.messages import INPLACE_ERROR, LEAF_INPLACE_ERROR
from tests.conftest import ROOT

CHINESE_SOLUTIONS = sorted((ROOT / "solutions" / "zh").glob("[0-9][0-9]_*.ipynb"))
ENGLISH_RUN = re.compile(r"\b[A-Za-z][a-z]+(?:[ -]+[A-Za-z][a-z]+){2,}\b")
PYTORCH = [re.compile(r"one of the variables needed for gradient computation.*", re.S), INPLACE_ERROR,
           LEAF_INPLACE_ERROR, re.compile(r"(which is output \d+ of \w+, )?is at version \d+; expected version \d+.*"),
           re.compile(r"Error detected in \w+\..*"),
           re.compile(r"(a leaf Variable that requires grad|Output \d+ of \w+ is a view|This view is).*"),
           re.compile(r"Traceback of forward call.*", re.S), re.compile(r"Hint: .*")]


def english_lines(text: str) -> list[str]:
    """The lines of `text` that hold an English sentence of the course's."""
    found = []
    for line in text.splitlines():
        plain = line
        for pattern in PYTORCH:
            plain = pattern.sub(" ", plain)
        plain = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\S*[/_.()\[\]=<>]\S*", " ", plain)
        if ENGLISH_RUN.search(plain):
            found.append(line)
    return found


def test_the_scan_finds_english_and_lets_pytorch_be():
    assert english_lines("检查通过。\nSee the failed checks below for what to fix.") == [
        "See the failed checks below for what to fix."]
    assert not english_lines("RuntimeError: one of the variables needed for gradient computation has been modified "
                             "by an inplace operation: [torch.FloatTensor [4]] is at version 1; expected version 0")
    assert not english_lines("形状为 `torch.Size([2, 3])`，梯度 tensor([1., 2.])")
