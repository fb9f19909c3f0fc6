"""What `beekeeper report` tells about an event, read from the room's own metrics and items.

The figures per minute, the waits and the origin's requests are CloudWatch's (GetMetricData:
the metrics the room's functions write, core/telemetry.py, and API Gateway's own request
count); a local room's come from its emulator's CloudWatch, which its functions write the same
way. The governor's last decisions and the counters since the room's last reset are the
room's items (docs/data-model.md), read as `beekeeper status` reads them. A metric with no
data in the window is a sentence in `notes`, never a failure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beekeeper.charts.event_data import LOCAL_REQUESTS, Capacity, EventReport, Waits
from beekeeper.cli.report_window import (
    DEFAULT_SECONDS,
    LOOK_BACK_SECONDS,
    MAX_WINDOW_SECONDS,
    Window,
    aligned,
    given_window,
)
from beekeeper.cli.room_metrics import MetricReader, Query, Values, edge_query, origin_query
from beekeeper.cli.room_metrics import room_query as _room_query
from beekeeper.cli.rooms import Deployment
from beekeeper.cli.table import batch_get
from beekeeper.core import telemetry
from beekeeper.core.datamodel import GOVERNOR_LOG_KEY
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import Mode, RoomSettings, capped
from beekeeper.core.words import count
from beekeeper.room.governor_records import recent_decisions
from beekeeper.room.room_state import snapshot_from_items, snapshot_keys
from beekeeper.simulator.measure import HISTOGRAM_BIN_SECONDS

HOUR = 3600
# A wait histogram's bins: at most this many (as the simulation report's).
MAX_WAIT_BINS = 40
# Waits are written to the millisecond: a percentile rank up to half a millisecond below an
# edge counts exactly the waits below it (PR's upper bound is inclusive).
_BELOW = 0.0005


def read_event(
    *,
    settings: RoomSettings,
    deployment: Deployment,
    cloudwatch: Any,
    dynamodb: Any,
    clock: Callable[[], float],
    pauses: Pauses,
    since: str | None = None,
    until: str | None = None,
    edge_cloudwatch: Callable[[], Any] | None = None,
) -> EventReport:
    now = clock()
    reader = MetricReader(cloudwatch)
    room = settings.name
    span = _span(reader, room, deployment, since, until, now)
    window, bucket, period, minutes = span.window, span.bucket, span.period, span.minutes
    waits_by_minute = period == bucket  # a percentile is read with its minute as the period
    series = MinuteSeries(
        reader.read(
            _per_minute_queries(settings, deployment, waits_by_minute),
            start=window.since,
            end=window.until,
            period=period,
            bucket_seconds=bucket,
        ),
        minutes,
    )
    counts, levels = series.counts, series.levels
    waits = _read_waits(reader, room, window, now)
    items = batch_get(
        dynamodb, deployment.table_name, [*snapshot_keys(settings), GOVERNOR_LOG_KEY], pauses
    )
    snapshot = snapshot_from_items(items, settings)
    report = EventReport(
        room=room,
        local=deployment.is_local,
        generated_at=int(now),
        since=window.since,
        until=window.until,
        window=window.how,
        window_said=window.said,
        minute_seconds=bucket,
        # A minute no producer wrote had no arrival; none in the window: arrivals unknown.
        arrivals_per_minute=(
            list(counts("arrivals")) if series.found["arrivals"] else [None] * minutes
        ),
        admitted_per_minute=counts("admitted"),
        rate_per_minute=levels("rate"),
        operator_rate_per_minute=levels("operator_rate"),
        waiting_per_minute=levels("backlog"),
        rejoined_per_minute=counts("rejoined"),
        waits=waits,
        wait_p50_per_minute=series.values("wait_p50") if waits_by_minute else None,
        wait_p90_per_minute=series.values("wait_p90") if waits_by_minute else None,
        capacity=_capacity(settings, snapshot.config.max_inside, series),
        governor=settings.dynamic_rate_throttling,
        governor_per_minute={n: counts(n) for n in ("halved", "held", "raised")},
        governor_decisions=[
            d
            for d in recent_decisions(items.get(GOVERNOR_LOG_KEY))
            if window.since <= d.at < window.until
        ],
        origin_requests_per_minute=None if deployment.is_local else levels("origin"),
        edge=deployment.distribution_id is not None,
        edge_requests_per_minute=_edge_requests(deployment, edge_cloudwatch, span),
        arrivals_total=snapshot.arrivals_total,
        admitted_total=snapshot.admitted_total,
        waiting_now=snapshot.waiting,
    )
    report.notes.extend(span.notes + missing_notes(report, series.found))
    return report


@dataclass(frozen=True)
class Span:
    """The report's window, read in buckets of `bucket` seconds from CloudWatch's periods of
    `period` seconds; `notes` say where that is coarser than the room's minute."""

    window: Window
    bucket: float
    period: int
    minutes: int  # buckets in the window
    notes: list[str]


def _span(
    reader: MetricReader,
    room: str,
    deployment: Deployment,
    since: str | None,
    until: str | None,
    now: float,
) -> Span:
    """The window asked for (or the last event's), at the finest resolution CloudWatch keeps."""
    minute = max(1.0, deployment.minute_seconds)
    window = given_window(since, until, now=now, bucket_seconds=minute) or last_event(
        reader, room, now=now, bucket_seconds=minute
    )
    notes: list[str] = []
    if deployment.minute_seconds < minute:
        notes.append(
            f"This room's minutes last {deployment.minute_seconds:g} s; CloudWatch keeps its "
            "figures by the second, so each point here is one second."
        )
    bucket, period = _resolution(window.since, now, minute)
    if bucket != minute:
        window = aligned(window.since, window.until, bucket, how=window.how, said=window.said)
        notes.append(_coarser(bucket, minute))
    return Span(window, bucket, period, max(1, round(window.seconds / bucket)), notes)


def _per_minute_queries(
    settings: RoomSettings, deployment: Deployment, waits_by_minute: bool
) -> list[Query]:
    """The room's metrics read per bucket, each by the name the report takes it by."""
    room = settings.name
    queries: list[Query] = [
        _room_query("arrivals", room, telemetry.ARRIVALS),
        _room_query("admitted", room, telemetry.ADMITTED),
        _room_query("rate", room, telemetry.RATE),
        _room_query("operator_rate", room, telemetry.OPERATOR_RATE),
        _room_query("backlog", room, telemetry.BACKLOG),
        _room_query("rejoined", room, telemetry.REJOINED),
        _room_query("halved", room, telemetry.GOVERNOR_HALVED),
        _room_query("held", room, telemetry.GOVERNOR_HELD),
        _room_query("raised", room, telemetry.GOVERNOR_RAISED),
        _room_query("inside", room, telemetry.INSIDE),
        _room_query("max_inside", room, telemetry.MAX_INSIDE),
        _room_query("left_line", room, telemetry.LEFT_LINE),
        _room_query("left_shop", room, telemetry.LEFT_SHOP),
        _room_query("no_shows", room, telemetry.NO_SHOWS),
        _room_query("sessions_ended", room, telemetry.SESSIONS_ENDED),
    ]
    if waits_by_minute:
        queries += [
            _room_query("wait_p50", room, telemetry.WAIT, "p50"),
            _room_query("wait_p90", room, telemetry.WAIT, "p90"),
        ]
    if not deployment.is_local:
        queries.append(origin_query("origin", settings.stack_name))
    return queries


@dataclass(frozen=True)
class MinuteSeries:
    """The per-bucket figures read, by name, as the report's lists of `minutes` buckets."""

    found: dict[str, Values]
    minutes: int

    def counts(self, name: str) -> list[int]:
        """A count per bucket (a bucket nobody wrote counted nothing)."""
        return [round(self.found[name].get(m, 0)) for m in range(self.minutes)]

    def levels(self, name: str) -> list[int | None]:
        """A level per bucket (None where nobody wrote one)."""
        return [_whole(self.found[name].get(m)) for m in range(self.minutes)]

    def values(self, name: str) -> list[float | None]:
        return [self.found[name].get(m) for m in range(self.minutes)]


def _capacity(settings: RoomSettings, max_inside: int, series: MinuteSeries) -> Capacity | None:
    """Capacity mode's figures, when the room has a cap (deployed, or set live since) or its
    metrics show one."""
    capacity_seen = any(series.found[n] for n in ("inside", "max_inside", "left_line", "left_shop"))
    if not (settings.mode is Mode.CAPACITY or capped(max_inside) or capacity_seen):
        return None
    return Capacity(
        inside_per_minute=series.levels("inside"),
        max_inside_per_minute=series.levels("max_inside"),
        left_line_per_minute=series.counts("left_line"),
        left_shop_per_minute=series.counts("left_shop"),
        no_shows_per_minute=series.counts("no_shows"),
        sessions_ended_per_minute=series.counts("sessions_ended"),
    )


def _edge_requests(
    deployment: Deployment, edge_cloudwatch: Callable[[], Any] | None, span: Span
) -> list[int | None] | None:
    """CloudFront's requests per bucket, for a room with an edge (its metrics are in
    us-east-1, read through `edge_cloudwatch`)."""
    if not deployment.distribution_id or edge_cloudwatch is None:
        return None
    edge = MetricReader(edge_cloudwatch()).read(
        [edge_query("edge", deployment.distribution_id)],
        start=span.window.since,
        end=span.window.until,
        period=span.period,
        bucket_seconds=span.bucket,
    )["edge"]
    return [_whole(edge.get(m)) for m in range(span.minutes)]


def last_event(reader: MetricReader, room: str, *, now: float, bucket_seconds: float) -> Window:
    """The last stretch of minutes with arrivals, admissions or a line in the room's metrics of
    the last 15 days (an hour without any ends an event); the last 24 hours when none."""
    activity = [
        _room_query("arrivals", room, telemetry.ARRIVALS),
        _room_query("admitted", room, telemetry.ADMITTED),
        _room_query("backlog", room, telemetry.BACKLOG),
    ]
    first_hour = math.floor((now - LOOK_BACK_SECONDS) / HOUR) * HOUR
    end = math.ceil(now / HOUR) * HOUR
    hourly = reader.read(activity, start=first_hour, end=end, period=HOUR)
    active = sorted({h for values in hourly.values() for h, v in values.items() if v > 0})
    if not active:
        return aligned(
            now - DEFAULT_SECONDS,
            now,
            bucket_seconds,
            how="default",
            said="Nobody came, was admitted or waited in the room's metrics of the last "
            "15 days, so this covers the last 24 hours.",
        )
    last = active[-1]
    first = last
    while first - 1 in active:
        first -= 1
    stop = min(now, first_hour + (last + 1) * HOUR)
    bucket, period = _resolution(first_hour + first * HOUR, now, bucket_seconds)
    start = math.floor((first_hour + first * HOUR) / bucket) * bucket
    fine = reader.read(activity, start=start, end=stop, period=period, bucket_seconds=bucket)
    busy = sorted({m for values in fine.values() for m, v in values.items() if v > 0})
    if not busy:
        busy = [0]
    begin = start + busy[0] * bucket
    finish = min(now, start + (busy[-1] + 2) * bucket)  # and the minute after: the line empty
    said = (
        "The room's last event, found in its metrics of the last 15 days: the last stretch "
        "of minutes with arrivals, admissions or a line (an hour without any ends an event)."
    )
    if finish - begin > MAX_WINDOW_SECONDS:
        begin = finish - MAX_WINDOW_SECONDS
        said += " It lasted longer than a day: this covers its last 24 hours."
    return aligned(begin, finish, bucket_seconds, how="last event", said=said)


def _resolution(since: float, now: float, minute: float) -> tuple[float, int]:
    """(bucket, period): the room's minute read by the second when CloudWatch still keeps it so
    (a local room's shortened minutes), else the shortest period kept for data from `since`."""
    age = now - since
    if minute < 60 and telemetry.shortest_period(age, high_resolution=True) == 1:
        return minute, 1
    shortest = telemetry.shortest_period(age) or HOUR
    return max(float(shortest), minute), shortest


def _coarser(bucket: float, minute: float) -> str:
    if minute < 60 and bucket == 60:
        return (
            "CloudWatch keeps a local room's shortened minutes by the second for 3 hours only: "
            "each point here is a whole real minute."
        )
    return (
        f"CloudWatch keeps this event's figures in {bucket / 60:g}-minute periods only (data "
        "this old is not kept by the minute): each point here is one such period."
    )


def _read_waits(reader: MetricReader, room: str, window: Window, now: float) -> Waits | None:
    """The window's waits: percentiles over the whole window, and a histogram from percentile
    ranks (the share of waits up to each edge)."""
    shortest = telemetry.shortest_period(now - window.since) or HOUR
    period = max(shortest, math.ceil(window.seconds / shortest) * shortest)
    whole = [_room_query(f"wait_{p}", room, telemetry.WAIT, p) for p in telemetry.PERCENTILES] + [
        _room_query("wait_longest", room, telemetry.WAIT, "Maximum"),
        _room_query("wait_timed", room, telemetry.WAIT, "SampleCount"),
    ]
    found = reader.read(whole, start=window.since, end=window.since + period, period=period)
    timed = round(found["wait_timed"].get(0, 0))
    if timed == 0:
        return None
    longest = found["wait_longest"].get(0)
    width = next(
        (w for w in HISTOGRAM_BIN_SECONDS if (longest or 0) < w * MAX_WAIT_BINS),
        HISTOGRAM_BIN_SECONDS[-1],
    )
    bins = int((longest or 0) // width) + 1
    edges = [(i + 1) * width for i in range(bins - 1)]
    ranks = reader.read(
        [_room_query(f"below_{i}", room, telemetry.WAIT, f"PR(:{edge - _BELOW:.4f})")
         for i, edge in enumerate(edges)],
        start=window.since,
        end=window.since + period,
        period=period,
    ) if edges else {}  # fmt: skip
    # The waits below each edge (a share of a whole number of waits: rounded, it is exact).
    below = [round(timed * ranks[f"below_{i}"].get(0, 0.0) / 100) for i in range(len(edges))]
    below.append(timed)
    counts = [max(0, n - previous) for n, previous in zip(below, [0, *below], strict=False)]
    p50, p90, p99 = in_order([found[f"wait_{p}"].get(0) for p in ("p50", "p90", "p99")], longest)
    return Waits(
        timed=timed,
        p50=p50,
        p90=p90,
        p99=p99,
        longest=longest,
        bin_seconds=width,
        counts=counts,
    )


def in_order(percentiles: list[float | None], longest: float | None) -> list[float | None]:
    """Percentiles as the report gives them: none above the longest wait (CloudWatch's
    Maximum) and none below a lower one. Each statistic is a query of its own, and nothing in
    GetMetricData ties a percentile to the Maximum read beside it; the report does, so that
    no figure says a wait longer than the longest."""
    ordered: list[float | None] = []
    floor = 0.0
    for value in percentiles:
        if value is None:
            ordered.append(None)
            continue
        value = max(floor, value if longest is None else min(value, longest))
        ordered.append(value)
        floor = value
    return ordered


def missing_notes(report: EventReport, series: dict[str, Values]) -> list[str]:
    """A sentence for each figure the room's metrics do not have in the window."""
    notes = []
    if not series["arrivals"] and not series["admitted"]:
        notes.append(
            "The room's metrics have no arrival and no admission in this window: nobody came "
            "(or the room was not deployed then)."
        )
    elif not series["arrivals"]:
        notes.append("No arrival was counted in this window: the arrivals are not known.")
    counted = sum(a for a in report.arrivals_per_minute if a)
    if report.arrivals_total > counted:
        notes.append(
            f"The room's counters hold {count(report.arrivals_total, 'arrival')} since its last "
            f"reset, {report.arrivals_total - counted:,} more than its metrics show here: a "
            "producer writes a minute's count when it next answers, so an event's last minute "
            "may be missing, and arrivals outside this window are not shown."
        )
    if not series["rate"]:
        notes.append(
            "No rate was recorded in this window: the trigger did not run (the room was not "
            "deployed, or its schedule was off)."
        )
    if report.waits is None and any(report.admitted_per_minute):
        notes.append(
            "No wait was recorded for these admissions: rooms deployed before the consumers "
            "wrote the Wait metric have none (redeploy to record them)."
        )
    if report.local:
        notes.append(LOCAL_REQUESTS + ".")
        return notes
    if not series.get("origin"):
        notes.append("API Gateway counted no request to the room's API in this window.")
    if not report.edge:
        notes.append(
            "This room has no edge (no CloudFront distribution in front of it): every request "
            "reached the origin, API Gateway."
        )
    elif report.edge_requests_per_minute is not None and not any(report.edge_requests_per_minute):
        notes.append("CloudFront counted no request to the room's edge in this window.")
    return notes


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)
