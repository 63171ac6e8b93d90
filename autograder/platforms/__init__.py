"""The platforms a course's bundles run on: one module each, defining PLATFORM (bundle/platform.py's
protocol). Adding a module here adds a platform to `autograder export` (export.py, the one module here that
is not a platform), to the tests and to the bundle's grader; nothing else lists them. Importing this registry
imports no torch (a platform's grader starts its worker first)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ..bundle.platform import Platform


@cache
def platforms() -> dict[str, Platform]:
    """Every platform, by name, in the order of their names."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        platform = getattr(importlib.import_module(f"{__name__}.{info.name}"), "PLATFORM", None)
        if platform is not None:
            if platform.name != info.name:
                raise ValueError(f"autograder/platforms/{info.name}.py's PLATFORM is named {platform.name!r}")
            found[platform.name] = platform
    return found
