"""What a simulation run shows, computed from the fakes' logs: never from the code under test.

Every figure here is a pure function of who joined when, who was admitted when (the first
successful write of their `v#` item), when each consumer ran and how the rate was set over
time, so each can be unit-tested on a hand-made history.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from beekeeper.room.pacing import RECEIVE_BATCH, minute_span

SMOOTHNESS_FACTOR = 1.25
WINDOW_SECONDS = 60.0
# A visitor admitted while one who joined this much earlier was still waiting overtook them.
OVERTAKE_SECONDS = 10.0


@dataclass(frozen=True)
class RateTimeline:
    """The room's rate: `initial` from the start, then each (time, rate) change in order."""

    initial: int
    changes: tuple[tuple[float, int], ...] = ()

    def at(self, when: float) -> int:
        rate = self.initial
        for changed_at, new_rate in self.changes:
            if changed_at <= when:
                rate = new_rate
        return rate

    def changes_within(self, start: float, end: float) -> bool:
        return any(start < when < end for when, _ in self.changes)


@dataclass(frozen=True)
class History:
    epoch: float  # the start of the first simulated minute
    minutes: int
    joined: Sequence[float]  # visitor i's join time, in join order
    admitted: Sequence[float | None]  # visitor i's first admission write, or None
    lanes: Sequence[tuple[float, float]]  # each consumer's (start, end)
    rate: RateTimeline
    minute_seconds: float = 60.0
    # A scheduled event's start: nobody is admitted before it (the pre-queue waits for the draw).
    admits_from: float = -math.inf

    @property
    def end(self) -> float:
        return self.epoch + self.minutes * self.minute_seconds

    def admission_times(self) -> list[float]:
        return sorted(t for t in self.admitted if t is not None and t < self.end)


def per_minute_of(per_second: Sequence[int], minutes: int) -> list[int]:
    """Counts per second (from the first minute's start) summed per minute."""
    return [sum(per_second[m * 60 : (m + 1) * 60]) for m in range(minutes)]


def percentile(sorted_values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile of already sorted values (None for none)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def waits(history: History) -> list[float]:
    """Seconds from joining to admission, for everyone admitted, sorted."""
    return sorted(
        admitted - joined
        for joined, admitted in zip(history.joined, history.admitted, strict=True)
        if admitted is not None
    )


def admitted_per_minute(history: History) -> list[int]:
    counts = [0] * history.minutes
    for when in history.admission_times():
        minute = int((when - history.epoch) // history.minute_seconds)
        if 0 <= minute < history.minutes:
            counts[minute] += 1
    return counts


def expected_per_minute(history: History) -> list[int]:
    """min(rate, visitors in line at some moment of the minute's admission span).

    In line during the span [s, e): joined before e, and not admitted before s. A visitor who
    joins in the gap between two spans belongs to the next one (docs/pipeline.md).
    """
    joined = sorted(history.joined)
    admitted = sorted(t for t in history.admitted if t is not None)
    first = round(history.epoch / history.minute_seconds)
    expected = []
    for minute in range(history.minutes):
        start, end = minute_span(first + minute, history.minute_seconds)
        # Everyone admitted before the span had joined before its end.
        in_line = bisect.bisect_left(joined, end) - bisect.bisect_left(admitted, start)
        admits = start >= history.admits_from
        expected.append(min(history.rate.at(start), in_line) if admits else 0)
    return expected


def minutes_with_rate_change(history: History) -> list[int]:
    return [
        m
        for m in range(history.minutes)
        if history.rate.changes_within(
            history.epoch + m * history.minute_seconds,
            history.epoch + (m + 1) * history.minute_seconds,
        )
    ]


@dataclass(frozen=True)
class WindowCheck:
    max_admitted: int  # the most admissions in any [t, t + 60 s)
    max_excess: int  # the most by which a window exceeded rate + one batch per consumer in it
    windows_judged: int


def sliding_windows(history: History) -> WindowCheck:
    """Every 60 s window that starts at an admission (the busiest windows all do).

    A window may admit the rate plus one receive batch per consumer that ran in it; windows
    that contain a rate change are not judged (the new rate applies from the change).
    """
    times = history.admission_times()
    starts = sorted(start for start, _ in history.lanes)
    ends = sorted(end for _, end in history.lanes)
    best = 0
    worst_excess = -math.inf
    judged = 0
    right = 0
    for left, start in enumerate(times):
        right = max(right, left)
        while right < len(times) and times[right] < start + WINDOW_SECONDS:
            right += 1
        count = right - left
        best = max(best, count)
        end = start + WINDOW_SECONDS
        if history.rate.changes_within(start, end):
            continue
        running = bisect.bisect_left(starts, end) - bisect.bisect_right(ends, start)
        allowed = history.rate.at(start) + RECEIVE_BATCH * max(1, running)
        worst_excess = max(worst_excess, count - allowed)
        judged += 1
    excess = 0 if worst_excess == -math.inf else int(worst_excess)
    return WindowCheck(max_admitted=best, max_excess=excess, windows_judged=judged)


@dataclass(frozen=True)
class Smoothness:
    peak_ratio: float  # busiest second / the mean second of the rate
    smooth: bool  # every second within 1.25 x the rate's mean second + one receive batch


def smoothness(history: History) -> Smoothness:
    per_second: Counter[int] = Counter()
    for when in history.admission_times():
        per_second[int(when - history.epoch)] += 1
    peak = 0.0
    smooth = True
    for second, count in per_second.items():
        mean = history.rate.at(history.epoch + second) / history.minute_seconds
        peak = max(peak, count / mean)
        if count > SMOOTHNESS_FACTOR * mean + RECEIVE_BATCH:
            smooth = False
    return Smoothness(peak_ratio=round(peak, 3), smooth=smooth)


def late_overtakes(history: History) -> int:
    """Admissions that passed someone still waiting who had joined OVERTAKE_SECONDS earlier."""
    order = sorted((when, index) for index, when in enumerate(history.admitted) if when is not None)
    done = [False] * len(history.joined)
    earliest = 0  # the first visitor (in join order) not admitted yet
    overtakes = 0
    for _, index in order:
        done[index] = True
        while earliest < len(done) and done[earliest]:
            earliest += 1
        if (
            earliest < index
            and history.joined[earliest] <= history.joined[index] - OVERTAKE_SECONDS
        ):
            overtakes += 1
    return overtakes


# -- time series for charts (simulate --report) ----------------------------------------------


def minute_of(history: History, when: float) -> int:
    """The simulated minute `when` falls in; earlier times count in the first minute."""
    return max(0, int((when - history.epoch) // history.minute_seconds))


def arrivals_per_minute(history: History) -> list[int]:
    """Visitors who joined in each minute (a burst just before the first counts in it)."""
    counts = [0] * history.minutes
    for when in history.joined:
        minute = minute_of(history, when)
        if minute < history.minutes:
            counts[minute] += 1
    return counts


def rate_per_minute(history: History) -> list[int]:
    """The rate in force at the start of each minute."""
    return [
        history.rate.at(history.epoch + m * history.minute_seconds) for m in range(history.minutes)
    ]


def waiting_over_time(history: History, step: float) -> list[int]:
    """Visitors in line (joined, not admitted yet) at the start, every `step` s, and the end."""
    joined = sorted(history.joined)
    admitted = sorted(t for t in history.admitted if t is not None)
    samples = round(history.minutes * history.minute_seconds / step)
    waiting = []
    for i in range(samples + 1):
        when = history.epoch + i * step
        waiting.append(bisect.bisect_right(joined, when) - bisect.bisect_right(admitted, when))
    return waiting


def events_per_minute(
    history: History, events: Sequence[tuple[float, str]]
) -> dict[str, list[int]]:
    """Each kind's events counted per minute: {kind: [count in minute 0, 1, ...]}."""
    counts: dict[str, list[int]] = {}
    for when, kind in sorted(events):
        minute = minute_of(history, when)
        if minute < history.minutes:
            counts.setdefault(kind, [0] * history.minutes)[minute] += 1
    return counts


# Bin widths a wait histogram may use: whole seconds or minutes an operator reads at a glance.
HISTOGRAM_BIN_SECONDS = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600)


@dataclass(frozen=True)
class Histogram:
    bin_seconds: int  # bin i holds waits in [i * bin_seconds, (i + 1) * bin_seconds)
    counts: list[int]

    def to_json(self) -> dict[str, object]:
        return {"bin_seconds": self.bin_seconds, "counts": self.counts}


def wait_histogram(sorted_waits: Sequence[float], max_bins: int = 60) -> Histogram:
    """The waits in at most `max_bins` bins of the narrowest readable width that fits."""
    longest = sorted_waits[-1] if sorted_waits else 0.0
    width = next(
        (w for w in HISTOGRAM_BIN_SECONDS if longest < w * max_bins), HISTOGRAM_BIN_SECONDS[-1]
    )
    counts = [0] * (int(longest // width) + 1 if sorted_waits else 0)
    for wait in sorted_waits:
        counts[min(len(counts) - 1, int(wait // width))] += 1
    return Histogram(bin_seconds=width, counts=counts)


def median_wait_by_arrival_minute(history: History) -> list[float | None]:
    """The median wait of the visitors who joined in each minute.

    Visitors still waiting at the end count as waiting longer than anyone admitted; None when
    nobody joined that minute or when half of them or more were still waiting at the end.
    """
    by_minute: list[list[float]] = [[] for _ in range(history.minutes)]
    for joined, admitted in zip(history.joined, history.admitted, strict=True):
        minute = minute_of(history, joined)
        if minute < history.minutes:
            by_minute[minute].append(math.inf if admitted is None else admitted - joined)
    medians: list[float | None] = []
    for waits_of_minute in by_minute:
        middle = percentile(sorted(waits_of_minute), 0.5)
        medians.append(None if middle is None or math.isinf(middle) else middle)
    return medians
