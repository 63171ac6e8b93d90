"""How `autograder blame --fix` changes the user's files: as safely as `git` does.

- One lock per file (`flock` on a lock file of its own, in a folder only the user can write), taken before
  the script first runs and held to the end: a second --fix on the same file stops at once and changes
  nothing (exit 4).
- No file is written before its rewrite is verified: verification runs the rewritten text (runs.py).
- Then, with the signals that end a process held back for the few system calls it takes: every file must
  still hold the bytes --fix read at the start (else nothing is written, and the user's edit stays); each
  backup is written beside its file under a name no file has yet (`train.py.orig`, `.orig.1`, ...: written
  in full under a temporary name, then linked to its name, so it is whole and never replaces another file);
  then each rewrite is written to a temporary file beside its file and renamed over it (the file is the old
  one or the new one, never half of each), with the old permission bits. Several files are written all or
  none: a failure half way puts the written ones back and removes the backups.
- SIGTERM, SIGHUP, SIGINT and SIGQUIT raise `Interrupted` in the main thread, so every `finally` runs: the
  runs stop, the scratch folders go, nothing is left half done (exit 128 + the signal's number).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ...feedback.wording import say
from ...intake.files import read_bounded
from .sources import MAX_SOURCE, SourceFile

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)


class CouldNotWrite(Exception):
    """Why --fix wrote nothing, in words for the user (exit 4)."""


class Interrupted(BaseException):
    """A signal that ends the process arrived: unwinds like KeyboardInterrupt, whatever the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Stopping:
    """The signal handler's state: how deep in `signals_held` blocks the main thread is, and a signal kept back."""

    held = 0
    pending: int | None = None


def _stop(signum: int, frame: object) -> None:
    if _Stopping.held:
        _Stopping.pending = _Stopping.pending or signum  # raised when the block ends
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Each of `SIGNALS` raises `Interrupted` (in the main thread) while the block runs."""
    old = {s: signal.signal(s, _stop) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """A signal that arrives in the block is raised when the block ends (it runs a few system calls, never left
    half done: starting a run, stopping it and removing its folders, writing the files)."""
    _Stopping.held += 1
    try:
        yield
    finally:
        _Stopping.held -= 1
        if not _Stopping.held and _Stopping.pending is not None:
            signum, _Stopping.pending = _Stopping.pending, None
            raise Interrupted(signum)


def lock_folder() -> Path:
    """A folder for lock files that only this user can write (XDG_RUNTIME_DIR, else the temporary folder)."""
    folder = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"autograder-blame-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise CouldNotWrite(say("blame: lock folder not yours", folder=folder))
    return folder


class FileLock:
    """`with FileLock(path, shown):` holds the one lock of a file; CouldNotWrite when another process has it."""

    def __init__(self, path: Path, shown: str) -> None:
        self.path, self.shown = path, shown
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        name = hashlib.sha256(os.fsencode(str(self.path))).hexdigest()[:32] + ".lock"
        fd = os.open(lock_folder() / name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").split(" ")[0] or "?"
            os.close(fd)
            raise CouldNotWrite(say("blame: locked by another", process=holder, file=self.shown)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {self.path}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the lock
            self._fd = None


def why_not_writable(f: SourceFile) -> str | None:
    """Why the file cannot be rewritten in place, or None."""
    try:
        st = os.stat(f.path)
    except OSError as e:
        return say("blame: unreadable now", error=e.strerror)
    if not st.st_mode & 0o222:
        return say("blame: read-only")
    if not os.access(f.path, os.W_OK):
        return say("blame: no permission")
    if not os.access(f.path.parent, os.W_OK | os.X_OK):
        return say("blame: folder not writable", folder=f.path.parent)
    return None


def check_writable(files: list[SourceFile]) -> None:
    """CouldNotWrite for the first file --fix could not rewrite (checked before anything runs, and again at the end)."""
    for f in files:
        why = why_not_writable(f)
        if why is not None:
            raise CouldNotWrite(say("blame: cannot write", file=f.shown, why=why))


def commit(changes: list[tuple[SourceFile, str]]) -> dict[Path, Path]:
    """Writes each file's new text, all or none, after a backup of each; returns {file: its backup}."""
    with signals_held():
        for f, _ in changes:
            _unchanged(f)
        check_writable([f for f, _ in changes])
        backups: dict[Path, Path] = {}
        written: list[SourceFile] = []
        try:
            for f, _ in changes:
                backups[f.path] = _backup(f)
            for f, text in changes:
                _unchanged(f)  # once more, right before: an edit saved meanwhile is never overwritten
                _replace(f.path, f.encode(text), f.mode)
                written.append(f)
        except (OSError, CouldNotWrite) as e:
            for f in written:
                with contextlib.suppress(OSError):
                    _replace(f.path, f.data, f.mode)
            for backup in backups.values():
                with contextlib.suppress(OSError):
                    backup.unlink()
            if isinstance(e, CouldNotWrite):
                raise
            raise CouldNotWrite(say("blame: could not write", file=e.filename or say("blame: a file"),
                                    error=e.strerror or e)) from e
        return backups


def _unchanged(f: SourceFile) -> None:
    try:
        now = read_bounded(f.path, MAX_SOURCE + 1)
    except OSError as e:
        raise CouldNotWrite(say("blame: cannot read again", file=f.shown, error=e)) from e
    if now != f.data:
        raise CouldNotWrite(say("blame: changed meanwhile", file=f.shown))


def _backup(f: SourceFile) -> Path:
    """`train.py.orig` (or `.orig.1`, ...), whole, with the original's bytes, permission bits and times."""
    times = os.stat(f.path)
    tmp = _write_temporary(f.path, f.data, f.mode)
    try:
        os.utime(tmp, ns=(times.st_atime_ns, times.st_mtime_ns))
        for n in range(1000):
            candidate = f.path.with_name(f.path.name + ".orig" + (f".{n}" if n else ""))
            try:
                os.link(tmp, candidate)  # fails where the name is taken: no file is ever replaced
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links: created exclusively, then written
                try:
                    _write_new(candidate, f.data, f.mode)
                except FileExistsError:
                    continue
            return candidate
        raise CouldNotWrite(say("blame: too many backups", file=f.shown)) from None
    finally:
        Path(tmp).unlink(missing_ok=True)


def _write_new(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            os.fsync(out.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def _replace(path: Path, data: bytes, mode: int) -> None:
    tmp = _write_temporary(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _write_temporary(path: Path, data: bytes, mode: int) -> str:
    """A file beside `path` holding `data`, flushed to disk, with the permission bits and owner of `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".blame-fix")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), mode)
            with contextlib.suppress(OSError):
                st = os.stat(path)
                os.fchown(out.fileno(), st.st_uid, st.st_gid)  # works as root, or when it changes nothing
            os.fsync(out.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
