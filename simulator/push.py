"""The push channel in the simulator: what the room published, how every page used the channel
(waiting_room_site/channel.js, by core/push.py's figures) and what AWS counts for it.

The room's own writers publish (room/push.py) to a `RecordingPublisher`: its log is every
publish's moment and reason. Each page (every simulated page is watched) fetches the shared
document as it loads and tries the socket at once. AWS admits CONNECTIONS_PER_SECOND new
connections a second (the per-API default); a page over it is refused, fetches the document
every FALLBACK_DOCUMENT_SECONDS at most (jittered) and tries the socket again after its
full-jitter backoff, as the page does. A subscribed page fetches the document once more to catch
up (as the page does, here always: the page skips it when a push comes first) and then gets
every publish until it closes (its admission noticed, the visitor gone, the run's end).

Never kinder than AWS where AWS does not say (AWS AppSync pricing and quotas; docs/stack.md):
a refused connection attempt is counted as an operation; connection-minutes and keep-alives
are counted per started minute of each connection; the delivery of a publish reaches its
subscribers at the per-API outbound rate (OUTBOUND_MESSAGES_PER_SECOND), after
DELIVERY_SECONDS (AWS documents no latency); a page without the socket notices a change at its
first fetch at least the edge copy's lifetime after the publish.
"""

from __future__ import annotations

import bisect
import json
import math
import random
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from beekeeper.core import push
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS

# AppSync Events' per-API defaults, "Rate of connections per API" (L-10498098) and "Rate of
# outbound messages per API" (L-F643C244), as docs/stack.md gives them (AWS AppSync endpoints
# and quotas, general/latest/gr/appsync.html): adjustable; the simulator runs the defaults.
CONNECTIONS_PER_SECOND = 2_000
OUTBOUND_MESSAGES_PER_SECOND = 1_000_000
# From a publish to a subscriber's socket, before the fan-out's own queue: not documented by
# AWS; modelled as half a second.
DELIVERY_SECONDS = 0.5
# From the socket's open to `subscribe_success`: two round trips, modelled.
HANDSHAKE_SECONDS = 0.3
# The keep-alive's interval ("The keep-alive interval is 60 seconds"), and the minute
# connection-minutes are counted in.
MINUTE = 60.0
# The change-noticed delays are kept in bins this wide (seconds).
NOTICED_BIN_SECONDS = 0.01


class RecordingPublisher:
    """The room's publisher (room/push.py's Publisher) in the simulator: every publish's moment
    (the simulated clock) and reason."""

    def __init__(self, clock: object) -> None:
        self._clock = clock
        self.times: list[float] = []
        self.reasons: list[str] = []

    def publish(self, channel: str, events: Sequence[str]) -> None:
        for event in events:
            self.times.append(self._clock())  # type: ignore[operator]
            self.reasons.append(str(json.loads(event)["reason"]))


@dataclass
class PushFigures:
    """Per visitor who loaded a page, and the change-noticed delays' percentiles."""

    connection_minutes: float
    operations: float  # connection attempts (refused ones too), subscribes, deliveries
    keepalives: float
    state_fetches: float
    noticed_p50: float | None
    noticed_p99: float | None
    refused_attempts: int
    fetches_per_second: list[int] = field(default_factory=list)


@dataclass
class PushChannelModel:
    """The pages' use of the channel, from each page's load and close (seconds; a page that
    never loaded has load 0.0) and the room's publishes."""

    loads: Sequence[float]
    stops: Sequence[float]
    publishes: Sequence[float]
    reasons: Sequence[str]
    rng: random.Random
    origin_time: float
    seconds: int
    # A watched page fetches once more to catch up once subscribed; a hidden one does not.
    catch_up: bool = True

    def figures(self) -> PushFigures:
        subscribed, refused = self._connections()
        changes = sorted(
            t for t, why in zip(self.publishes, self.reasons, strict=True) if why != push.RESYNC
        )
        publishes = sorted(self.publishes)
        noticed = [0] * 1
        fetches_per_second = [0] * self.seconds
        fetches = minutes = keepalives = 0
        subscribes = 0
        horizon = float(STATE_MAX_AGE_SECONDS)
        live_subs = array("d")
        live_stops = array("d")
        pages = 0

        def note(delay: float, count: int = 1) -> None:
            index = int(delay / NOTICED_BIN_SECONDS)
            if index >= len(noticed):
                noticed.extend([0] * (index + 1 - len(noticed)))
            noticed[index] += count

        # Bound once: the loop below runs for every page, its inner ones for every fetch.
        origin, seconds, stops, floor = self.origin_time, self.seconds, self.stops, math.floor
        draw, fallback_delay = self.rng.random, push.fallback_delay
        for index, load in enumerate(self.loads):
            if load == 0.0:
                continue
            pages += 1
            stop = stops[index]
            sub = subscribed[index]
            until = min(sub, stop)
            # The fetches without the socket: at load, then every fallback delay.
            times = [load]
            at = load + fallback_delay(draw())
            while at < until:
                times.append(at)
                at += fallback_delay(draw())
            if sub < math.inf:
                # A page opens its socket as it loads, whatever its first /polling answers a
                # moment later: a page admitted at once has a connection of a minute too.
                subscribes += 1
                catch_up = sub + STATE_MAX_AGE_SECONDS + 1
                if self.catch_up and catch_up < stop:
                    times.append(catch_up)
                started = max(1, math.ceil((stop - sub) / MINUTE))
                minutes += started
                keepalives += started
                live_subs.append(sub)
                live_stops.append(max(stop, sub))
            fetches += len(times)
            for when in times:
                second = max(0, floor(when - origin))
                if second < seconds:
                    fetches_per_second[second] += 1
            # The changes published while this page was open and not subscribed: noticed at
            # its first fetch an edge copy's lifetime after.
            first = bisect.bisect_right(changes, load)
            last = bisect.bisect_left(changes, until)
            for change in changes[first:last]:
                k = bisect.bisect_left(times, change + horizon)
                if k < len(times):
                    note(times[k] - change)
        subs = sorted(live_subs)
        ends = sorted(live_stops)
        del live_subs, live_stops
        deliveries = 0
        for when in publishes:
            deliveries += bisect.bisect_right(subs, when) - bisect.bisect_right(ends, when)
        for when in changes:
            reached = bisect.bisect_right(subs, when) - bisect.bisect_right(ends, when)
            # Delivered to them at the outbound rate, after the delivery's own delay.
            step = max(1, reached // 1000)
            for k in range(0, reached, step):
                note(DELIVERY_SECONDS + k / OUTBOUND_MESSAGES_PER_SECOND, min(step, reached - k))
        per = 1 / pages if pages else 0.0
        total = sum(noticed)
        return PushFigures(
            connection_minutes=round(minutes * per, 3),
            # Every connection attempt (refused ones too), each subscribe, each delivery.
            operations=round((subscribes + refused + subscribes + deliveries) * per, 3),
            keepalives=round(keepalives * per, 3),
            state_fetches=round(fetches * per, 3),
            noticed_p50=_percentile(noticed, total, 0.5),
            noticed_p99=_percentile(noticed, total, 0.99),
            refused_attempts=refused,
            fetches_per_second=fetches_per_second,
        )

    def _connections(self) -> tuple[array[float], int]:
        """When each page is subscribed (inf: never, before it closed), and how many attempts
        were refused, with AWS's rate of new connections per second: second by second, the
        attempts of a second (loads and retries) in time order, the first
        CONNECTIONS_PER_SECOND through, each other one tried again after its backoff."""
        loads, stops = self.loads, self.stops
        subscribed = array("d", [math.inf]) * len(loads)
        failures = array("H", [0]) * len(loads)
        order = sorted((i for i in range(len(loads)) if loads[i] != 0.0), key=loads.__getitem__)
        retries: dict[int, list[tuple[float, int]]] = {}
        refused = 0
        # Bound once: the loop below runs once per attempt, hundreds of thousands in a burst.
        draw, retry_delay, floor = self.rng.random, push.socket_retry_delay, math.floor
        position = 0
        while position < len(order) or retries:
            due = [min(retries)] if retries else []
            if position < len(order):
                due.append(math.floor(loads[order[position]]))
            second = min(due)
            attempts = retries.pop(second, [])
            while position < len(order) and loads[order[position]] < second + 1:
                index = order[position]
                attempts.append((loads[index], index))
                position += 1
            attempts.sort()
            admitted = 0
            for when, index in attempts:
                # A retry after the page closed is never made (its first attempt, as it
                # loads, always is).
                if when >= stops[index] and failures[index]:
                    continue
                if admitted < CONNECTIONS_PER_SECOND:
                    admitted += 1
                    subscribed[index] = when + HANDSHAKE_SECONDS
                    continue
                # Refused; a retry within this full second is refused again, and a page
                # closed meanwhile tries no more.
                stop = stops[index]
                retry = when
                tried = failures[index]
                while True:
                    refused += 1
                    if tried < 60_000:
                        tried += 1
                    retry += retry_delay(tried, draw())
                    if floor(retry) != second or retry >= stop:
                        break
                failures[index] = tried
                if retry < stop:
                    retries.setdefault(floor(retry), []).append((retry, index))
        return subscribed, refused


def _percentile(bins: list[int], total: int, fraction: float) -> float | None:
    if not total:
        return None
    rank = math.ceil(fraction * total)
    seen = 0
    for index, count in enumerate(bins):
        seen += count
        if seen >= rank:
            return round((index + 1) * NOTICED_BIN_SECONDS, 2)
    return None
