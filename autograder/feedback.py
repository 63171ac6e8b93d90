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
            fix = fix_text(error.culprit)
            if fix:
                text += "\n" + fix
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


def fix_text(report: dict, limit: int = 1200) -> str | None:
    """The suggested rewrite of the culprit line, made from the op names and line texts in the report alone
    (autograder/blame/suggest.py: pure code, the student's code is not run for it); None without one."""
    from .blame.suggest import suggest_from_line, without_comment  # libcst: only when an in-place error is explained

    try:
        suggestion = suggest_from_line(report)
    except Exception:  # noqa: BLE001 - a suggestion is a bonus; the feedback stands without it
        return None
    if suggestion is None:
        return None
    if suggestion.after is None or suggestion.before is None:
        text = "How to fix it: " + suggestion.why
    else:
        before, after = (" / ".join(without_comment(line.strip()) or "" for line in part.splitlines())
                         for part in (suggestion.before, suggestion.after))
        text = f"A fix to try (line {suggestion.line}): `{before}` -> `{after}`. Why: {suggestion.why}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(message: str, limit: int = 400) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
