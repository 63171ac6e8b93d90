"""Where the reference implementations come from: `references/<id>.py`, outside the installed package.

Students install this package, and a worker may import it, so the answers must not be in it. The
grader loads each reference by file path from the course's `references/` folder: the one named by
AUTOGRADER_REFERENCES, or the one beside the package in a source checkout (an editable install).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

ENV = "AUTOGRADER_REFERENCES"
"""Names the references folder where it is not beside the package (a platform bundle sets it)."""

_CHECKOUT_REFERENCES = Path(__file__).resolve().parent.parent / "references"

_loaded: dict[Path, Mapping[str, Any]] = {}
_lock = threading.Lock()


class ReferencesMissing(Exception):
    """The reference implementations are not installed here; the message says how to get them."""


def references_dir() -> Path | None:
    """The references folder: $AUTOGRADER_REFERENCES if set, else the checkout's if there is one."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    return _CHECKOUT_REFERENCES if _CHECKOUT_REFERENCES.is_dir() else None


def load_reference(exercise_id: str) -> Mapping[str, Any]:
    """The namespace the exercise's reference defines (its REFERENCE dict), loaded once per file."""
    folder = references_dir()
    path = folder / f"{exercise_id}.py" if folder is not None else None
    if path is None or not path.is_file():
        where = f"no {path}" if path is not None else f"{ENV} is not set, and there is no {_CHECKOUT_REFERENCES}"
        raise ReferencesMissing(
            f"The reference implementations are not installed ({where}). Grading needs the course's "
            f"references/ folder: run the grader from a source checkout of the course, or set {ENV} to that "
            "folder. The notebook self-check, check(), works without them."
        )
    path = path.resolve()
    with _lock:
        if path not in _loaded:
            _loaded[path] = _execute(path)
        return _loaded[path]


def _execute(path: Path) -> Mapping[str, Any]:
    """Runs the file as a module under a private name (in sys.modules, as dataclasses and inspect expect:
    only the grader's process ever loads one)."""
    name = f"_autograder_reference_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferencesMissing(f"{path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    reference = getattr(module, "REFERENCE", None)
    if not isinstance(reference, Mapping) or not all(isinstance(k, str) for k in reference):
        raise TypeError(f"{path} must define REFERENCE, a dict from the names the exercise defines to objects")
    return MappingProxyType(dict(reference))
