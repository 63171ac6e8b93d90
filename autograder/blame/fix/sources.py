"""The files `autograder blame --fix` may rewrite, each read once: where it is, and its bytes when --fix read it.

Paths are resolved once, absolutely, against the folder `blame` was started in: the script before it runs
(so a script that changes folder, or copies itself elsewhere, does not move what --fix writes), any other
file a report names when a rewrite first needs it. The bytes read then are what every rewrite is made from,
what verification runs (scratch.py: never the file on disk), and what the file must still hold when the
rewrite is written (transaction.py). The text keeps the file's encoding: a UTF-8 byte order mark, a PEP 263
coding line, CRLF line ends come back as they were.
"""

from __future__ import annotations

import io
import os
import stat
import tokenize
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ...intake.files import read_bounded

MAX_SOURCE = 16_000_000
"""Bytes: a larger file is not rewritten."""


@dataclass(frozen=True)
class SourceFile:
    """One file as --fix read it."""

    path: Path
    """Absolute, every link resolved: what is locked, compared and written."""
    shown: str
    """The name reports and messages use (the script's as typed on the command line)."""
    data: bytes
    encoding: str
    """`utf-8`, `utf-8-sig` (a byte order mark) or the coding line's encoding."""
    mode: int
    """Permission bits, given to the rewritten file and the backup."""

    @cached_property
    def text(self) -> str:
        return self.data.decode(self.encoding)

    def encode(self, text: str) -> bytes:
        """The bytes of a rewritten text, in the file's encoding (the byte order mark kept)."""
        return text.encode(self.encoding)


def read_source(path: Path, shown: str) -> SourceFile | None:
    """The file as it is now, or None where it is not a regular file, is too large or is not text."""
    try:
        data = read_bounded(path, MAX_SOURCE)
        mode = stat.S_IMODE(os.stat(path).st_mode)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return SourceFile(path, shown, data, encoding, mode)


class Sources:
    """Report file names -> the files as --fix read them, resolved against the folder `blame` started in."""

    def __init__(self, script: str, folder: str) -> None:
        self.folder = folder
        self.given = script
        self.script = Path(os.path.realpath(os.path.join(folder, script)))
        self._read: dict[Path, SourceFile | None] = {}
        self.file(script)  # before the script runs

    def resolve(self, name: str) -> Path | None:
        """The absolute path of a file a report names; None for code without a file (`<stdin>`, a cell)."""
        if name == self.given:
            return self.script
        if not name or name.startswith("<"):
            return None
        return Path(os.path.realpath(os.path.join(self.folder, name)))

    def shown(self, path: Path) -> str:
        return self.given if path == self.script else str(path)

    def file(self, name: str) -> SourceFile | None:
        """The file a report names, as first read (read now if it has not been)."""
        path = self.resolve(name)
        if path is None:
            return None
        if path not in self._read:
            self._read[path] = read_source(path, self.shown(path))
        return self._read[path]

    def text(self, name: str) -> str | None:
        """For the suggestion rules: a file's text as first read."""
        found = self.file(name)
        return found.text if found is not None else None
