"""Where a verification run of `autograder blame --fix` runs: a scratch folder, and source text given to it.

Each run is a fresh interpreter (gradients.py) whose working folder is a new scratch folder that shows the
user's working folder: one symbolic link per entry, so that relative reads (`open("data/train.csv")`) find
the user's files. Writes never reach them: an audit hook (PEP 578) sees every write Python makes (`open` for
writing, `os.open`, remove, rename, mkdir, chmod, ...). A write into the scratch folder first replaces the
links on its way with real folders and copies (a link to a file is replaced by a copy of it, or by nothing
when the file is truncated), so it lands in the scratch folder; a write anywhere else (an absolute path, a
path next to the script through `__file__`) raises PermissionError, and the run fails with that message.
`torch.save` and `torch.jit.save`, which open their file in C++, are checked the same way. What is not seen:
writes made by other C code (h5py, a C++ extension writing a file) and by child processes the script starts;
they are the limits book/reference/blame.md states.

The script and the files a rewrite changed are run from text (`Overrides`), under their own file names, so
that the user's files are read, never written, while a rewrite is verified, and reports name the user's
lines.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import linecache
import os
import shutil
import sys
import types
from collections.abc import Callable
from typing import Any

from ...feedback.wording import say

MAX_ENTRIES = 10_000
"""Entries of a folder shown in the scratch folder (the working folder, or one a write goes into)."""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class ScratchFolder:
    """A scratch folder that shows `shown` (the user's working folder) and takes every write."""

    def __init__(self, root: str, shown: str, also: tuple[str, ...] = ()) -> None:
        self.root = os.path.realpath(root)
        self.shown = os.path.realpath(shown)
        self.writable = (self.root, *(os.path.realpath(a) for a in also))
        _mirror(self.shown, self.root)

    def inside(self, path: str) -> bool:
        """Whether a real path is in the scratch folder (or the run's own temporary folder, or a device)."""
        return path.startswith("/dev/") or any(path == w or path.startswith(w + os.sep) for w in self.writable)

    def make_writable(self, path: str, final: bool, truncate: bool) -> None:
        """Replace the links on the way to `path` inside the scratch folder (and the last one when `final`) by
        real folders and copies, so that a write lands there; PermissionError where it would land elsewhere."""
        target = os.path.abspath(path)
        if target == self.root or target.startswith(self.root + os.sep):
            parts = os.path.relpath(target, self.root).split(os.sep)
            here = self.root
            for i, part in enumerate(parts):
                if part in ("", "."):
                    continue
                here = os.path.join(here, part)
                last = i == len(parts) - 1
                if os.path.islink(here) and (not last or final):
                    _copy_up(here, truncate and last)
        where = os.path.realpath(target if final else os.path.dirname(target) or ".")
        if not self.inside(where):
            raise PermissionError(say("blame: write outside scratch", path=path))

    def hook(self, event: str, args: tuple) -> None:
        """The audit hook: every write Python makes goes through `make_writable` first."""
        check = _EVENTS.get(event)
        if check is not None:
            check(self, args)

    def guard_torch_writers(self) -> None:
        """`torch.save(obj, path)` and `torch.jit.save` open their file in C++, where no audit event is raised:
        their path goes through the same check (a checkpoint is what a training script writes most)."""
        import torch
        import torch.jit

        for owner, name in ((torch, "save"), (torch.serialization, "save"), (torch.jit, "save")):
            original = getattr(owner, name)
            setattr(owner, name, self._checked(original))

    def _checked(self, write: Callable[..., Any]) -> Callable[..., Any]:
        def checked(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            path = _path(f)
            if path is not None:
                self.make_writable(path, final=True, truncate=True)
            return write(obj, f, *args, **kwargs)

        checked.__wrapped__ = write  # type: ignore[attr-defined]  # functools' convention, which inspect.unwrap follows
        return checked


def _mirror(source: str, folder: str) -> None:
    """One link in `folder` per entry of `source`."""
    with os.scandir(source) as entries:
        for n, entry in enumerate(entries):
            if n >= MAX_ENTRIES:
                raise OSError(say("blame: too many entries", folder=source, most=MAX_ENTRIES))
            os.symlink(entry.path, os.path.join(folder, entry.name))


def _copy_up(link: str, truncate: bool) -> None:
    """A link to a folder becomes a folder of links; a link to a file, a copy (nothing when truncated)."""
    target = os.path.realpath(link)
    os.unlink(link)
    if os.path.isdir(target):
        os.mkdir(link)
        _mirror(target, link)
    elif os.path.isfile(target) and not truncate:
        shutil.copy2(target, link)


def _path(value: Any) -> str | None:
    if isinstance(value, bytes):
        return os.fsdecode(value)
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    return None  # a file descriptor: already open


def _open(scratch: ScratchFolder, args: tuple) -> None:
    path, mode, flags = (list(args) + [None, None, None])[:3]
    path = _path(path)
    if path is None:
        return
    if isinstance(mode, str):
        writing, truncate, exclusive = any(c in mode for c in "wax+"), "w" in mode, "x" in mode
    else:
        flags = flags if isinstance(flags, int) else 0
        writing, truncate, exclusive = bool(flags & _WRITE_FLAGS), bool(flags & os.O_TRUNC), bool(flags & os.O_EXCL)
    if not writing:
        return
    if exclusive and os.path.lexists(path):
        return  # the open itself fails with FileExistsError, as it would anywhere
    scratch.make_writable(path, final=True, truncate=truncate)


def _one(final: bool, *positions: int) -> Callable[[ScratchFolder, tuple], None]:
    def check(scratch: ScratchFolder, args: tuple) -> None:
        for i in positions:
            path = _path(args[i]) if i < len(args) else None
            if path is not None:
                scratch.make_writable(path, final=final, truncate=False)
    return check


_EVENTS: dict[str, Callable[[ScratchFolder, tuple], None]] = {
    "open": _open,
    "os.remove": _one(False, 0), "os.rmdir": _one(False, 0), "os.mkdir": _one(False, 0),
    "os.rename": _one(False, 0, 1), "os.link": _one(False, 1), "os.symlink": _one(False, 1),
    "os.truncate": _one(True, 0), "os.chmod": _one(True, 0), "os.chown": _one(True, 0), "os.utime": _one(True, 0),
    "os.chflags": _one(True, 0), "os.setxattr": _one(True, 0), "os.removexattr": _one(True, 0),
    "shutil.rmtree": _one(True, 0),
}
"""Audit events that write, and which of their arguments are the paths written (`final`: the last part of the
path is followed, as `chmod` follows a link; otherwise only its folder must be the scratch folder's)."""


class Overrides(importlib.abc.MetaPathFinder):
    """Modules whose file (by its real path) is given as text: imported from that text, under their own file
    name, so that the frames, reports and `__file__` are those of the user's file while it stays unread."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = {os.path.realpath(path): text for path, text in texts.items()}
        for path, text in texts.items():
            linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)  # reports quote it

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None:
                continue
            origin = spec.origin and os.path.realpath(spec.origin)
            if origin in self.texts and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                assert spec.origin is not None  # its real path is one of the texts'
                spec.loader = _TextLoader(name, spec.origin, self.texts[origin])
            return spec
        return None

    def run_main(self, path: str) -> None:
        """Runs `path` as `__main__` (as `python path` would), from its given text where it has one."""
        real = os.path.realpath(path)
        if real in self.texts:
            text = self.texts[real]
        else:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8-sig")
        code = compile(text, path, "exec", dont_inherit=True)
        main = types.ModuleType("__main__")
        main.__dict__.update(__file__=path, __builtins__=builtins, __loader__=None, __spec__=None,
                             __package__=None, __cached__=None)
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = main
        try:
            exec(code, main.__dict__)
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


class _TextLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, name: str, path: str, text: str) -> None:
        super().__init__(name, path)
        self.text = text

    def get_source(self, fullname: str) -> str:
        return self.text

    def get_code(self, fullname: str) -> types.CodeType:  # never the cached bytecode of the file on disk
        return compile(self.text, self.path, "exec", dont_inherit=True)
