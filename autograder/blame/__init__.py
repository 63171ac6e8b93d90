"""`autograder blame`: names the line that modified a tensor autograd saved (book/reference/blame.md), and suggests
the rewrite that fixes it.

    from autograder.blame import locate, explain
    with locate() as loc:            # around forward and backward
        loss = model(x).sum(); loss.backward()
    explain(train_step)              # in a notebook: prints the report and the suggestion, not a traceback

Names are loaded on first use (PEP 562), so that the suggestion modules, which are pure code, load
without torch: the grader renders suggestions from the workers' JSON before it needs torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {"Site": "locator.frames", "UserFrames": "locator.frames",
          "ANSWER_FILE": "locator.locator", "Locator": "locator.locator", "culprit_for": "locator.locator",
          "explain": "locator.locator", "locate": "locator.locator", "report_of": "locator.locator",
          "Operation": "locator.report", "Report": "locator.report", "TensorInfo": "locator.report",
          "Suggestion": "suggest.suggest"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
