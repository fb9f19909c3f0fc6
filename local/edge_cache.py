"""The local edge's cache: bounded in entries and bytes, and rid of what has expired.

CloudFront keeps an object no longer than its TTL allows and "might evict the object—remove
the object before its expiration date—to make room for objects that have been requested more
recently" (CloudFront Developer Guide, "Manage how long content stays in the cache
(expiration)"). This cache does the same, within bounds of its own, so that no client can
grow a local room's memory by asking with ever new keys:

- a copy kept under a key (the marketing link's: a visitor's cookie, token header, Accept and
  `work`) leaves when it expires; a copy with an empty key (one per path, the same for
  everyone: the page, the shared state) stays expired until it is replaced, so that it can be
  served while the origin fails, as CloudFront serves an expired object on a 5xx;
- at most `max_entries` copies and `max_bytes` bytes (keys, headers and bodies counted, see
  `kept_bytes`) are held: beyond that the least recently used copy leaves first, and a copy
  larger than the whole budget is not kept at all.

How large one key can be is bounded before the cache sees it: the edge refuses a request
longer than CloudFront takes (core.edge.MAX_REQUEST_BYTES).
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

Key = tuple[str | None, ...]

# What one kept copy costs beside the bytes counted: its key tuple, the OrderedDict's link, the
# answer's objects and the heap's entry (measured with tracemalloc: about 700 bytes on CPython
# 3.11, rounded up).
ENTRY_OVERHEAD_BYTES = 1_024


@dataclass
class Kept:
    status: str
    headers: list[tuple[str, str]]
    body: bytes
    stored: float
    expires: float


def kept_bytes(key: Key, kept: Kept) -> int:
    """The bytes a copy is counted at: its key's text, its headers, its body and the overhead."""
    key_bytes = sum(len(part) for part in key if part is not None)
    header_bytes = sum(len(name) + len(value) for name, value in kept.headers)
    return key_bytes + header_bytes + len(kept.body) + len(kept.status) + ENTRY_OVERHEAD_BYTES


class EdgeCache:
    """Not thread-safe: the edge calls it under its own lock."""

    def __init__(self, *, max_entries: int, max_bytes: int, keyed: Callable[[Key], bool]) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._keyed = keyed  # whether a key holds more than its path (it leaves at expiry)
        self._entries: OrderedDict[Key, tuple[Kept, int]] = OrderedDict()
        # (expires, order, key) of the keyed copies: the next to expire first. A copy replaced
        # or evicted leaves a stale heap entry behind, skipped when it comes up.
        self._expiring: list[tuple[float, int, Key]] = []
        self._order = itertools.count()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key, now: float) -> Kept | None:
        """The copy under `key`, fresh or (an empty key's) expired; None when there is none."""
        self.purge(now)
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Key, kept: Kept, now: float) -> None:
        self.purge(now)
        self._remove(key)
        size = kept_bytes(key, kept)
        if size > self.max_bytes:
            return
        while self._entries and (
            len(self._entries) >= self.max_entries or self.bytes + size > self.max_bytes
        ):
            self._remove(next(iter(self._entries)))  # the least recently used
        self._entries[key] = (kept, size)
        self.bytes += size
        if self._keyed(key):
            heapq.heappush(self._expiring, (kept.expires, next(self._order), key))
            if len(self._expiring) > 2 * self.max_entries:
                # Entries of copies evicted before they expired: drop them now, so that the heap
                # too stays within the bound.
                self._expiring = [
                    (found.expires, next(self._order), kept_key)
                    for kept_key, (found, _) in self._entries.items()
                    if self._keyed(kept_key)
                ]
                heapq.heapify(self._expiring)

    def purge(self, now: float) -> None:
        """Removes every keyed copy that has expired at `now`."""
        while self._expiring and self._expiring[0][0] <= now:
            expires, _, key = heapq.heappop(self._expiring)
            found = self._entries.get(key)
            if found is not None and found[0].expires == expires:
                self._remove(key)

    def _remove(self, key: Key) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self.bytes -= found[1]
