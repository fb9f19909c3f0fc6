"""The room's own counters, sampled every few seconds, as the series the live view charts.

`LocalRoom` reads the counters the Lambdas keep (arrivals, admitted, the rate; the same read
as the trigger's, `read_snapshot`) and adds each reading here. The series are for the last
hour of the room's minutes (shortened with `--minute-seconds`), or since the room started when
that is later, the minute under way last.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from dataclasses import dataclass

from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS

HOUR_MINUTES = 60
# The requests a second are counted over this long: a watched page asks for the shared state
# every DOCUMENT_EVERY_SECONDS, so a window of several of its requests shows a room whose pages
# poll as busy, however the readings fall between them.
REQUESTS_WINDOW_SECONDS = 5 * DOCUMENT_EVERY_SECONDS


@dataclass(frozen=True)
class Reading:
    at: float  # epoch seconds
    arrivals: int  # cumulative, all shards
    admitted: int  # cumulative
    rate: int  # the rate in force (the governor's, when it slows the room)
    enabled: bool = True
    # Requests the room's edge answered, and those it sent its origin, cumulative (local/edge.py).
    edge_requests: int = 0
    origin_requests: int = 0
    # The push channel (local/channel.py): pages subscribed now, and the changes published
    # and the messages delivered to pages, cumulative.
    subscriptions: int = 0
    publishes: int = 0
    deliveries: int = 0

    @property
    def waiting(self) -> int:
        return max(0, self.arrivals - self.admitted)


@dataclass(frozen=True)
class LiveSeries:
    first_minute_at: float  # epoch seconds the first minute of the series starts at
    minute_seconds: float
    arrivals_per_minute: list[int]
    admitted_per_minute: list[int]
    rate_per_minute: list[int]
    waiting_step_seconds: float
    waiting: list[int]  # every `waiting_step_seconds` from `first_minute_at` to the latest
    latest: Reading | None
    # Requests a second at the edge and at the origin over the last REQUESTS_WINDOW_SECONDS
    # (since the first reading, when the room is younger).
    edge_per_second: float = 0.0
    origin_per_second: float = 0.0


class LiveCounters:
    """Readings of the last hour of room minutes; safe to add to and read from two threads."""

    def __init__(self, minute_seconds: float, sample_seconds: float) -> None:
        self.minute_seconds = minute_seconds
        self.sample_seconds = sample_seconds
        keep = math.ceil((HOUR_MINUTES + 1) * minute_seconds / sample_seconds) + 2
        self._readings: deque[Reading] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def add(self, reading: Reading) -> None:
        with self._lock:
            self._readings.append(reading)

    def series(self, now: float) -> LiveSeries:
        with self._lock:
            readings = list(self._readings)
        minute = self.minute_seconds
        current = math.floor(now / minute)
        # The last hour, or since the room's first reading when it is younger than that.
        started = math.floor(readings[0].at / minute) if readings else current
        first = max(current - HOUR_MINUTES + 1, min(started, current))
        times = [r.at for r in readings]

        def at(moment: float) -> Reading | None:
            """The last reading at or before `moment`; before the first, the first."""
            index = bisect.bisect_right(times, moment) - 1
            return readings[max(0, index)] if readings else None

        arrivals, admitted, rates = [], [], []
        for m in range(first, current + 1):
            start, end = at(m * minute), at(min(now, (m + 1) * minute))
            if start is None or end is None or end.at < m * minute:
                arrivals.append(0)
                admitted.append(0)
                rates.append(end.rate if end is not None else 0)
                continue
            arrivals.append(max(0, end.arrivals - start.arrivals))
            admitted.append(max(0, end.admitted - start.admitted))
            rates.append(end.rate)
        step = self.sample_seconds
        origin = first * minute
        steps = max(0, math.floor((now - origin) / step))
        waiting = []
        for i in range(steps + 1):
            moment = origin + i * step
            reading = at(moment)
            known = reading is not None and reading.at <= moment
            waiting.append(reading.waiting if known and reading is not None else 0)
        edge_rate = origin_rate = 0.0
        if readings:
            last = readings[-1]
            before = at(last.at - REQUESTS_WINDOW_SECONDS)
            if before is not None and last.at > before.at:
                elapsed = last.at - before.at
                edge_rate = max(0, last.edge_requests - before.edge_requests) / elapsed
                origin_rate = max(0, last.origin_requests - before.origin_requests) / elapsed
        return LiveSeries(
            first_minute_at=origin,
            minute_seconds=minute,
            arrivals_per_minute=arrivals,
            admitted_per_minute=admitted,
            rate_per_minute=rates,
            waiting_step_seconds=step,
            waiting=waiting,
            latest=readings[-1] if readings else None,
            edge_per_second=edge_rate,
            origin_per_second=origin_rate,
        )
