"""Rate limits for a room (and, through a tunnel, the internet): token buckets kept in memory only.

Keys are pseudonyms and client addresses. Addresses are held here, in this process's memory, for limiting
and nothing else: they are never written to the log, the database or the dashboard, and a bucket that has
refilled is forgotten at the next sweep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Rate:
    """`per_second` sustained, `burst` at once."""

    per_second: float
    burst: float


class Buckets:
    """One token bucket per key, at most `max_keys` of them (new keys beyond that are refused)."""

    def __init__(self, rate: Rate, max_keys: int = 100_000, clock=time.monotonic):
        self.rate, self.max_keys, self.clock = rate, max_keys, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._swept = clock()

    def allow(self, key: str) -> bool:
        """Takes one token from `key`'s bucket; False when it is empty."""
        now = self.clock()
        if now - self._swept > 60:
            self.sweep(now)
        tokens, at = self._buckets.get(key, (self.rate.burst, now))
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            return False
        tokens = min(self.rate.burst, tokens + (now - at) * self.rate.per_second)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1, now)
        return True

    def sweep(self, now: float) -> None:
        """Forgets the keys whose buckets are full again: they hold nothing worth keeping."""
        full = self.rate.burst / self.rate.per_second if self.rate.per_second > 0 else float("inf")
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full}
        self._swept = now

    def __len__(self) -> int:
        return len(self._buckets)
