"""Emptying the worker's scratch folder (the sandbox's private /tmp) after every job, whatever the job left:
folders it made unreadable, trees thousands deep. Links are removed, never followed. Free of torch."""

from __future__ import annotations

import os
import shutil


def _remove(path: str) -> None:
    """Removes a file or a whole tree that a job made, whatever modes it set, without following links."""

    def writable_then_retry(function, name, _exc) -> None:
        os.chmod(os.path.dirname(name), 0o700)
        if os.path.isdir(name) and not os.path.islink(name):
            os.chmod(name, 0o700)
        function(name)

    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        shutil.rmtree(path, onerror=writable_then_retry)
    else:
        os.unlink(path)


def empty(directory: str, keep: tuple[str, ...] = ()) -> bool:
    """Removes what a job left in the scratch folder (the sandbox's private /tmp), except the paths in `keep`
    and the folders on the way to them (Python itself, when it lives under /tmp). False if something stayed."""
    clean = True
    for entry in os.scandir(directory):
        try:
            if entry.path in keep:
                continue
            if any(k.startswith(entry.path + os.sep) for k in keep):
                clean = empty(entry.path, keep) and clean
            else:
                _remove(entry.path)
        except (OSError, RecursionError):
            clean = False
    return clean
