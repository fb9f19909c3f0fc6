"""Capacity mode's figures, computed from what visitors did (never from the code under test).

A visit, as the simulated crowd lived it: admitted at some moment (the first admission write,
from the fake table's log), arrived at the shop or not, renewed the session at each /client
check, and ended it with /leave or by going idle. From those alone:

- **holding a place** (what the cap bounds): from the admission until the place is due back:
  the claim deadline for a visitor who never arrived, otherwise the deadline the last write
  set (the last renewal + the session, or the last heartbeat of a page with the presence
  script + the hold a heartbeat buys) or the leave, whichever came first. Deadlines are
  whole seconds,
  counted from the whole second of the moment that set them: the room's clocks (API Gateway's
  request time in the templates, the consumer's `admitted_at`) are read in whole seconds;
- **at the shop** (what the shop is for): from the arrival until the visitor left or went idle;
- **a place freed**: a holding interval's end while someone was waiting, and **refilled** by
  the next admission after it (the oldest free place first).

Pure functions of plain numbers, so each is unit-tested on a hand-made history.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Visit:
    admitted_at: float
    arrived_at: float | None  # None: a no-show
    renewals: tuple[float, ...] = ()  # /client checks (and the arrival) that renewed the session
    left_at: float | None = None  # /leave, when the visitor used it
    gone_at: float | None = None  # left, or went idle (None: still at the shop at the end)
    beats: tuple[float, ...] = ()  # heartbeats of the presence script that held the place


def deadline(moment: float, seconds: float) -> float:
    """A place's deadline set at `moment` for `seconds`: from the moment's whole second."""
    return math.floor(moment) + seconds


def holding(
    visit: Visit, *, claim_seconds: float, session_seconds: float, beat_hold_seconds: float = 0.0
) -> tuple[float, float]:
    """The interval during which `visit` holds a place (see the module); a heartbeat holds it
    for `beat_hold_seconds`."""
    if visit.arrived_at is None:
        end = deadline(visit.admitted_at, claim_seconds)
    else:
        last = max((visit.arrived_at, *visit.renewals))
        end = deadline(last, session_seconds)
        if visit.beats and max(visit.beats) >= last:
            end = deadline(max(visit.beats), beat_hold_seconds)
    if visit.left_at is not None:
        end = min(end, visit.left_at)
    return visit.admitted_at, max(visit.admitted_at, end)


def peak(intervals: Sequence[tuple[float, float]]) -> int:
    """The most intervals [start, end) open at one instant (an end before a start at a tie)."""
    events = sorted([(end, -1) for _, end in intervals] + [(start, 1) for start, _ in intervals])
    level = best = 0
    for _, change in events:
        level += change
        best = max(best, level)
    return best


def first_reaching(intervals: Sequence[tuple[float, float]], level: int) -> float | None:
    """The first instant at which `level` intervals are open at once (None: never)."""
    events = sorted([(end, -1) for _, end in intervals] + [(start, 1) for start, _ in intervals])
    open_now = 0
    for moment, change in events:
        open_now += change
        if open_now >= level:
            return moment
    return None


def time_average(intervals: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """The mean number of intervals open over [start, end)."""
    if end <= start:
        return 0.0
    covered = sum(max(0.0, min(e, end) - max(s, start)) for s, e in intervals)
    return covered / (end - start)


def refill_times(
    frees: Sequence[float], admissions: Sequence[float], waiting_at: Sequence[tuple[float, int]]
) -> list[float]:
    """Seconds from each place freed while someone waited to the admission that took it."""
    return sorted(taken - freed for freed, taken in refills(frees, admissions, waiting_at))


def refills(
    frees: Sequence[float], admissions: Sequence[float], waiting_at: Sequence[tuple[float, int]]
) -> list[tuple[float, float]]:
    """(freed, taken): each place freed while someone waited, and the admission that took it.

    `waiting_at` is the line's length over time, (moment, visitors waiting) in time order: a
    place that frees while nobody waits is not a refill. Admissions take the oldest place freed
    before them; an admission with no freed place waiting for it (the shop had room) refills
    nothing.
    """
    pending: list[float] = []
    pairs: list[tuple[float, float]] = []
    frees_iter = iter(sorted(frees))
    next_free = next(frees_iter, None)
    for admitted in sorted(admissions):
        while next_free is not None and next_free <= admitted:
            if _waiting(waiting_at, next_free) > 0:
                heapq.heappush(pending, next_free)
            next_free = next(frees_iter, None)
        if pending:
            pairs.append((heapq.heappop(pending), admitted))
    return pairs


def _waiting(series: Sequence[tuple[float, int]], moment: float) -> int:
    """The line's length at `moment` (its last value at or before it; 0 before the first)."""
    low, high = 0, len(series)
    while low < high:
        middle = (low + high) // 2
        if series[middle][0] <= moment:
            low = middle + 1
        else:
            high = middle
    return series[low - 1][1] if low else 0
