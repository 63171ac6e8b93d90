"""A course on PyTorch's 'modified by an inplace operation' error: exercises, autograder, locator."""

from __future__ import annotations

from typing import Any

__all__ = ["check", "diagnose", "predict"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`from autograder import check` imports torch only when it is asked for: the command line starts
    its sandboxed workers before this process imports torch (cli.py)."""
    if name == "check":
        from .selfcheck import AFTER_CHECK, AFTER_STOP, BEFORE_CHECK, check
        from .workshop import client

        client.install(check, BEFORE_CHECK, AFTER_CHECK, AFTER_STOP)  # the opt-in live view: check.join(URL), ...
        return check
    if name in ("predict", "diagnose"):  # the module itself, callable: `predict(...)`, then `predict.reveal()`
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
