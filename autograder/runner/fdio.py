"""Bytes on the worker's pipes: exactly n bytes, never one more (no process reads ahead into what a job may
not have yet), and the one framing every pipe uses: an 8-byte little-endian length, then the bytes.
Free of torch: the pool imports it before torch, the relay never imports torch."""

from __future__ import annotations

import os
from collections.abc import Callable

LENGTH_BYTES = 8


def read_exactly(fd: int, n: int, read: Callable[[int, int], bytes] = os.read) -> bytes | None:
    """The next `n` bytes of `fd`, or None if it ends first. `read`: os.read, or a copy bound before answer
    code ran (the guard's)."""
    chunks, left = [], n
    while left > 0:
        chunk = read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def frame(data: bytes) -> bytes:
    """`data` with its length in front."""
    return len(data).to_bytes(LENGTH_BYTES, "little") + data


def read_frame(fd: int, limit: int, read: Callable[[int, int], bytes] = os.read) -> bytes | None:
    """The next frame on `fd`: None if the pipe ends first or the length is over `limit` (nothing is read past
    the length then)."""
    head = read_exactly(fd, LENGTH_BYTES, read)
    size = int.from_bytes(head, "little") if head is not None else -1
    if not 0 <= size <= limit:
        return None
    return read_exactly(fd, size, read)


def split_frame(data: bytes) -> tuple[bytes, bytes] | None:
    """A frame at the start of `data`, and what follows it; None where `data` is too short to hold it."""
    size = int.from_bytes(data[:LENGTH_BYTES], "little") if len(data) >= LENGTH_BYTES else -1
    if not 0 <= size <= len(data) - LENGTH_BYTES:
        return None
    return data[LENGTH_BYTES:LENGTH_BYTES + size], data[LENGTH_BYTES + size:]
