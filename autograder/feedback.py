"""Turns errors into words a student can act on."""

from __future__ import annotations

from .outcome import ErrorInfo
from .spec import INPLACE_ERROR, LEAF_INPLACE_ERROR

_INPLACE_MEANING = (
    "PyTorch saved a tensor during the forward pass because backward needs it, and something changed "
    "that tensor in place before backward ran (its version counter moved on). Find the in-place "
    "operation (`+=`, `x[...] = ...`, a `*_()` method, `inplace=True`) that writes to a tensor an "
    "earlier operation saved, and make it out of place (`out = out + x`) or work on a `clone()`."
)
_LEAF_MEANING = (
    "A tensor created by you with `requires_grad=True` (a leaf, such as a parameter) was changed in "
    "place while autograd was recording. Update parameters inside `torch.no_grad()`, or compute a "
    "new tensor instead of changing the leaf."
)


def explain(error: ErrorInfo) -> str:
    """One paragraph: what was raised, where, what it means."""
    if error.not_attempted:
        return "Not attempted yet: the answer still raises NotImplementedError."
    where = ""
    if error.line is not None:
        where = f" at line {error.line} of your answer"
        if error.code:
            where += f" (`{error.code.strip()}`)"
    text = f"Your code raised {error.type}{where}: {first_line(error.message)}"
    if INPLACE_ERROR.search(error.message):
        text += "\nWhat it means: " + _INPLACE_MEANING
        if error.culprit:
            text += "\n" + culprit_text(error.culprit)
    elif LEAF_INPLACE_ERROR.search(error.message):
        text += "\nWhat it means: " + _LEAF_MEANING
    return text


def _site(site: object) -> str:
    """`op` at line N (`code`), from one entry of a locator report, whatever a worker put there."""
    if not isinstance(site, dict):
        return "an operation the locator could not see"
    text = f"`{str(site.get('op'))[:80]}`"
    if isinstance(site.get("line"), int):
        where = site.get("file")
        text += f" at line {site['line']}" + ("" if where in (None, "<answer>") else f" of {str(where)[:200]}")
    if site.get("code"):
        text += f" (`{str(site['code']).strip()[:200]}`)"
    return text


def culprit_text(report: dict) -> str:
    """What the culprit locator found, in one sentence."""
    text = f"The line that broke autograd: {_site(report.get('culprit'))} changed a tensor in place"
    if report.get("saved_by"):
        text += f" after {_site(report.get('saved_by'))} had saved it for backward"
    return text + "."


def first_line(message: str, limit: int = 400) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
