"""Which stack frames are the user's: the innermost one names the line, the chain shows how it got there.

Frames are walked with `sys._getframe` and kept as (file, line, function) triples; source lines are read
(with linecache) only when a report is written, so capturing a stack costs a few microseconds.
"""

from __future__ import annotations

import linecache
import os
import site
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FrameType

import torch

Raw = tuple[str, int, str]
"""A frame as captured: (file, line, function)."""


@dataclass(frozen=True)
class Site:
    """A line of the user's code: the file as Python knows it (as given or as imported), 1-based line."""

    file: str
    line: int
    function: str

    @property
    def code(self) -> str | None:
        """The source line, stripped; None where the source cannot be read."""
        text = linecache.getline(self.file, self.line).strip()
        return text or None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def library_dirs() -> tuple[str, ...]:
    """Folders whose frames are never the user's: torch, this package, the standard library, site-packages."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # autograder/
    paths = {os.path.dirname(torch.__file__), package}
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            paths.add(path)
    try:
        paths.update(site.getsitepackages())
    except AttributeError:  # virtualenvs with an old site.py
        pass
    return tuple(sorted({os.path.realpath(p) + os.sep for p in paths}))


class UserFrames:
    """Decides which frames are user code and captures them, innermost first.

    `user` is None (every frame outside `library_dirs()`), a file name (only frames compiled under that
    name, e.g. the grader's "<answer>"), or a predicate on the file name.
    """

    def __init__(self, user: str | Callable[[str], bool] | None = None, max_chain: int = 12,
                 outermost: CodeType | None = None) -> None:
        if user is None:
            dirs = library_dirs()
            self._is_user_file: Callable[[str], bool] = lambda f: _outside(f, dirs)
        elif isinstance(user, str):
            self._is_user_file = user.__eq__
        elif callable(user):
            self._is_user_file = user
        else:
            raise TypeError(f"user must be None, a file name or a predicate on file names, not {type(user).__name__}")
        self._cache: dict[CodeType, bool] = {}
        self.max_chain = max_chain
        self.outermost = outermost  # a frame running this code ends the walk: a script runner's callers

    def is_user(self, code: CodeType) -> bool:
        known = self._cache.get(code)
        if known is None:
            known = self._cache[code] = bool(self._is_user_file(code.co_filename))
        return known

    def capture(self, frame: FrameType | None, limit: int | None = None) -> tuple[Raw, ...]:
        """The user's frames from `frame` outward, innermost first, at most `limit` (or `max_chain`)."""
        limit = limit or self.max_chain
        chain = []
        cache, outermost = self._cache, self.outermost
        while frame is not None:
            code = frame.f_code
            if code is outermost:
                break
            user = cache.get(code)
            if user is None:
                user = self.is_user(code)
            if user:
                chain.append((code.co_filename, frame.f_lineno, code.co_name))
                if len(chain) >= limit:
                    break
            frame = frame.f_back
        return tuple(chain)


def _outside(filename: str, dirs: tuple[str, ...]) -> bool:
    if filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):
        return True  # "<answer>", "<stdin>", "<string>": code the user handed to Python
    return not os.path.realpath(filename).startswith(dirs)


def sites(raw: tuple[Raw, ...]) -> tuple[Site, ...]:
    return tuple(Site(*r) for r in raw)


def caller(depth: int = 0) -> FrameType:
    """The frame `depth` levels above the caller of this function."""
    return sys._getframe(depth + 2)
