"""What the participant's machine keeps of a workshop, so that one person is one participant across notebooks
and kernel restarts: per room, the pseudonym and secret the server gave at join, and a marker per kernel
while a check runs (a kernel that dies in a check leaves it behind, and the next join reports it).

In `$XDG_STATE_HOME/autograder-workshop-participant/` (default `~/.local/state/...`), a folder of this user
only. Files are written atomically and read with O_NOFOLLOW, a size bound and a type check. Standard library.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

MAX_FILE = 4096
ROOM = re.compile(r"[0-9a-f]{16}")


def folder() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "autograder-workshop-participant"


def _read(path: Path) -> dict | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read(MAX_FILE + 1)
    except OSError:
        return None
    try:
        data = json.loads(raw) if len(raw) <= MAX_FILE else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(room: str) -> tuple[str, str] | None:
    """(pseudonym, secret) kept for the room, if any."""
    if not ROOM.fullmatch(room):
        return None
    data = _read(folder() / f"{room}.json")
    if data and isinstance(data.get("pseudonym"), str) and isinstance(data.get("secret"), str):
        return data["pseudonym"], data["secret"]
    return None


def keep(room: str, pseudonym: str, secret: str) -> None:
    if ROOM.fullmatch(room):
        _write(folder() / f"{room}.json", {"pseudonym": pseudonym, "secret": secret})


def forget(room: str) -> None:
    if ROOM.fullmatch(room):
        (folder() / f"{room}.json").unlink(missing_ok=True)


def _marker(room: str, pid: int) -> Path:
    return folder() / f"{room}.checking.{pid}.json"


def checking(room: str, exercise: str) -> None:
    """Marks this kernel as running a check of `exercise`."""
    if ROOM.fullmatch(room):
        _write(_marker(room, os.getpid()), {"exercise": exercise, "t": time.time()})


def checked(room: str) -> None:
    if ROOM.fullmatch(room):
        _marker(room, os.getpid()).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def died(room: str) -> list[str]:
    """The exercises that other kernels, now dead, were checking when they died; their markers removed."""
    if not ROOM.fullmatch(room) or not folder().is_dir():
        return []
    found = []
    for path in folder().glob(f"{room}.checking.*.json"):
        pid = path.name.split(".")[2]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        data = _read(path)
        path.unlink(missing_ok=True)
        if data and isinstance(data.get("exercise"), str):
            found.append(data["exercise"])
    return found
