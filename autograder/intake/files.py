"""Files in and out: reading a submission without following or trusting it, writing without half files.

Submissions are hostile: a link to the teacher's solution, a FIFO that never ends, a device, a 10 GB
file. `read_bounded` reads one only when it is a regular file that is not a link, and never more than a
bound. What the grader writes (results.json, CSV) passes through `json_text` / `csv_cell`, which always
encode (no lone surrogates) and keep spreadsheet formulas out of CSV cells.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from ..feedback.wording import say


class RefusedFile(OSError):
    """A submission the grader will not read; the message (about the file's name) is shown to the student."""


class IsALink(RefusedFile):
    """A symbolic link: never followed, whatever it points to."""


class NotARegularFile(RefusedFile):
    """A folder, FIFO, socket or device: never read (a FIFO would block, a device never end)."""


class TooLarge(RefusedFile):
    """More bytes than the bound."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def describe_size(limit: int) -> str:
    return f"{limit / 1e6:g} MB" if limit >= 1_000_000 else f"{limit} bytes"


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file, at most `limit` of them. IsALink, NotARegularFile or TooLarge otherwise
    (other OSErrors, such as a missing file, as they come).

    A link or a special file is refused before it is opened (lstat), and the open itself can neither
    follow a link (O_NOFOLLOW), block on a FIFO (O_NONBLOCK) nor leak into a child (O_CLOEXEC), so a
    file swapped between the two is refused too (fstat).
    """
    name = os.fspath(path)
    shown = os.path.basename(name) or name
    mode = os.lstat(name).st_mode
    if stat.S_ISLNK(mode):
        raise IsALink(say("intake: a link", file=shown))
    if not stat.S_ISREG(mode):
        raise NotARegularFile(say("intake: not a regular file", file=shown, kind=_kind(mode)))
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        if os.path.islink(name):  # ELOOP: it became a link after the lstat
            raise IsALink(say("intake: a link", file=shown)) from None
        raise RefusedFile(say("intake: not opened", file=shown, why=e.strerror or e)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(say("intake: not a regular file", file=shown, kind=_kind(mode)))
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(say("intake: too large", file=shown, limit=describe_size(limit)))
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def safe_text(text: str) -> str:
    """`text` with every lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What a terminal would obey rather than show: C0 and C1 controls but newline and tab (ESC starts the sequences
that set a window's title, write the clipboard or move the cursor over a line already printed), DEL, and the
marks that reorder text right to left."""


def terminal_text(text: str) -> str:
    """`text` as a terminal must show it when a submission wrote it: every control character made visible
    (`\\x1b`, `\\u202e`), so that it can only ever be read, never obeyed."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), safe_text(text))


def plain_data(value: Any, depth: int = 0) -> Any:
    """A JSON-able copy of `value` whose strings all encode: str keys, safe text, unknown objects as text."""
    if depth > 50:
        return "(nested too deeply)"
    if isinstance(value, str):
        return safe_text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {safe_text(str(k)): plain_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v, depth + 1) for v in value]
    return safe_text(str(value))


def json_text(data: Any) -> str:
    """Indented JSON of `data` (through plain_data) that always encodes as UTF-8, with a final newline."""
    return json.dumps(plain_data(data), indent=2, ensure_ascii=False) + "\n"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value: object) -> str:
    """A text cell for a CSV a spreadsheet will open: safe text, and a leading quote where the cell would
    start like a formula (=, +, -, @, tab, CR), so that a name such as `=HYPERLINK(...)` stays text. A CR
    becomes a newline, which the csv module quotes (it leaves a lone CR bare, splitting the row)."""
    text = safe_text(str(value))
    if text.startswith(_FORMULA_START):
        text = "'" + text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Write to a temporary file beside `path`, then rename: readers see the old or the new file. `mode`
    (0644 for what others must read) is set before the rename; without it the file is mkstemp's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
