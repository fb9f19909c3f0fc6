"""What `beekeeper status` reports, read in a handful of requests, and how it is shown.

One BatchGetItem (chunked by 100 keys) reads the config, governor, governor-log and counter
items and the last hour's `minute#<m>` items; one GetQueueAttributes per queue reads the depth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from beekeeper.cli.rooms import Deployment
from beekeeper.cli.table import batch_get, from_item
from beekeeper.core.datamodel import DRAW_DRAWN, GOVERNOR_KEY, GOVERNOR_LOG_KEY, minute_key
from beekeeper.core.polling import admission_flow, eta_seconds
from beekeeper.core.retry import Pauses
from beekeeper.core.schedule import format_starts_at
from beekeeper.core.settings import RoomSettings, capped
from beekeeper.core.words import count
from beekeeper.room.governor import BASELINE_PENDING
from beekeeper.room.governor_records import Decision, GovernorState, recent_decisions
from beekeeper.room.room_state import snapshot_from_items, snapshot_keys

HOUR_MINUTES = 60
DECISIONS_SHOWN = 5
_QUEUE_ATTRIBUTES = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]


@dataclass(frozen=True)
class StatusReport:
    room: str
    region: str
    local: bool
    generated_at: int
    enabled: bool
    rate: int
    operator_rate: int
    slowed: bool
    config_version: int
    dynamic_rate_throttling: bool
    governor_state: str | None
    governor_sampled_url: str
    governor_slow_ms: int  # 0: none
    governor_baseline_median_ms: float | None
    governor_decisions: list[Decision]  # the last few, newest first
    queue_visible: int
    queue_in_flight: int
    dead_letter: int | None
    arrivals_total: int
    admitted_total: int
    waiting: int
    last_minute: int  # the room's minutes since the epoch (see minute_seconds)
    last_minute_arrivals: int | None
    last_minute_admitted: int
    estimated_wait_seconds: int | None
    # The last hour, a value a minute, the current (unfinished) minute last.
    chart_first_minute: int
    admitted_per_minute: list[int]
    arrivals_per_minute: list[int | None]  # None: the minute's counters were not read
    waiting_per_minute: list[int | None]  # at each minute's end; for the current one, now
    # Capacity mode (max_inside 0: no cap): places held now, the cap, visitors let in per
    # minute lately, and visitors who left the line before their turn.
    inside: int = 0
    max_inside: int = 0
    turnover: int = 0
    left_line: int = 0
    # A scheduled event: its start (epoch s, 0: none), the draw's state ("" none, committed,
    # drawing, drawn), how many it drew, its commitment and (once drawn) its secret; a hold or
    # a close with the operator's message.
    starts_at: int = 0
    draw_state: str = ""
    prequeue_drawn: int = 0
    draw_commitment: str = ""
    draw_secret: str = ""
    held: bool = False
    closed: bool = False
    closed_message: str = ""
    # The room's minute in seconds: 60, or a local room's shortened one (--minute-seconds);
    # last_minute and chart_first_minute count these minutes.
    minute_seconds: float = 60.0
    # The room's public address (its edge; a local room's loopback port).
    public_url: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["governor_decisions"] = [d.to_json() for d in self.governor_decisions]
        # The newest decision under its original key, kept for scripts that read it.
        data["governor_last_decision"] = next(iter(data["governor_decisions"]), None)
        return data


def read_status(
    *,
    settings: RoomSettings,
    deployment: Deployment,
    dynamodb: Any,
    sqs: Any,
    clock: Callable[[], float],
    pauses: Pauses,
) -> StatusReport:
    now = int(clock())
    minute_seconds = deployment.minute_seconds
    this_minute = int(clock() // minute_seconds)
    hour = range(this_minute - HOUR_MINUTES, this_minute + 1)  # the last hour and this minute
    found = batch_get(
        dynamodb,
        deployment.table_name,
        [GOVERNOR_KEY, GOVERNOR_LOG_KEY, *snapshot_keys(settings)] + [minute_key(m) for m in hour],
        pauses,
    )
    snapshot = snapshot_from_items(found, settings)  # read as the Lambdas read it
    config = snapshot.config
    arrivals, admitted, waiting = (
        snapshot.arrivals_total,
        snapshot.admitted_total,
        snapshot.waiting,
    )
    items = {pk: from_item(item) for pk, item in found.items()}
    visible, in_flight = _queue_depth(sqs, deployment.queue_url)
    dead_letter = None
    if deployment.dead_letter_queue_url:
        dead_letter = _queue_depth(sqs, deployment.dead_letter_queue_url)[0]

    def minute_value(minute: int, field: str) -> int | None:
        item = items.get(minute_key(minute))
        return int(item[field]) if item is not None and field in item else None

    last = this_minute - 1
    snapshot_then, snapshot_next = (
        minute_value(last, "arrivals_total"),
        minute_value(this_minute, "arrivals_total"),
    )
    last_arrivals = (
        snapshot_next - snapshot_then
        if snapshot_then is not None and snapshot_next is not None
        else None
    )
    chart_minutes = range(this_minute - HOUR_MINUTES + 1, this_minute + 1)
    hour_series = _hour_series(
        chart_minutes,
        admitted={m: minute_value(m, "admitted") or 0 for m in hour},
        arrivals_at_claim={m: minute_value(m, "arrivals_total") for m in hour},
        arrivals_now=arrivals,
        admitted_now=admitted,
    )
    governor = GovernorState.from_item(found.get(GOVERNOR_KEY))
    baseline = governor.baseline if governor is not None else None
    return StatusReport(
        room=settings.name,
        region=settings.region,
        local=deployment.is_local,
        generated_at=now,
        enabled=config.enabled,
        rate=config.rate,
        operator_rate=config.operator_rate,
        slowed=config.slowed,
        config_version=config.version,
        dynamic_rate_throttling=settings.dynamic_rate_throttling,
        governor_state=governor.state if governor is not None else None,
        governor_sampled_url=settings.sampled_url,
        governor_slow_ms=settings.slow_ms,
        governor_baseline_median_ms=baseline.median_ms if baseline is not None else None,
        governor_decisions=_newest_first(found.get(GOVERNOR_LOG_KEY)),
        queue_visible=visible,
        queue_in_flight=in_flight,
        dead_letter=dead_letter,
        # Since the last reset: the counters go on above the places it took.
        arrivals_total=snapshot.arrivals_since_reset,
        admitted_total=snapshot.admitted_since_reset,
        waiting=waiting,
        last_minute=last,
        last_minute_arrivals=last_arrivals,
        last_minute_admitted=minute_value(last, "admitted") or 0,
        estimated_wait_seconds=(
            eta_seconds(
                waiting,
                admission_flow(
                    config.rate,
                    max_inside=config.max_inside,
                    inside=snapshot.inside,
                    turnover=snapshot.turnover,
                ),
            )
            if config.enabled
            else None
        ),
        chart_first_minute=chart_minutes.start,
        admitted_per_minute=hour_series.admitted,
        arrivals_per_minute=hour_series.arrivals,
        waiting_per_minute=hour_series.waiting,
        inside=snapshot.inside,
        max_inside=config.max_inside,
        turnover=snapshot.turnover,
        left_line=snapshot.skipped,
        starts_at=config.starts_at,
        draw_state=snapshot.draw.state,
        prequeue_drawn=snapshot.draw.size,
        draw_commitment=snapshot.draw.commitment,
        draw_secret=snapshot.draw.secret,
        held=config.held,
        closed=config.closed,
        closed_message=config.message,
        minute_seconds=minute_seconds,
        public_url=deployment.public_url or "",
    )


@dataclass(frozen=True)
class HourSeries:
    admitted: list[int]
    arrivals: list[int | None]
    waiting: list[int | None]


def _hour_series(
    minutes: range,
    *,
    admitted: dict[int, int],
    arrivals_at_claim: dict[int, int | None],
    arrivals_now: int,
    admitted_now: int,
) -> HourSeries:
    """Per minute, from the `minute#<m>` items and the counters read now.

    A minute's arrivals are the growth of the arrival counters from its claim to the next
    claim (to now for the current minute). The visitors waiting at a minute's end are the
    arrivals counted by then less those admitted by then: everyone admitted so far, less
    those admitted in the minutes since.
    """
    current = minutes[-1]

    def arrivals_at_end(minute: int) -> int | None:
        return arrivals_now if minute == current else arrivals_at_claim.get(minute + 1)

    arrivals_series: list[int | None] = []
    waiting_series: list[int | None] = []
    admitted_since = 0  # in the minutes after the one being looked at
    for minute in reversed(minutes):
        start, end = arrivals_at_claim.get(minute), arrivals_at_end(minute)
        arrivals_series.append(None if start is None or end is None else max(0, end - start))
        admitted_by_end = max(0, admitted_now - admitted_since)
        waiting_series.append(None if end is None else max(0, end - admitted_by_end))
        admitted_since += admitted.get(minute, 0)
    return HourSeries(
        admitted=[admitted.get(m, 0) for m in minutes],
        arrivals=arrivals_series[::-1],
        waiting=waiting_series[::-1],
    )


def _queue_depth(sqs: Any, queue_url: str) -> tuple[int, int]:
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=_QUEUE_ATTRIBUTES)[
        "Attributes"
    ]
    return (
        int(attributes.get("ApproximateNumberOfMessages", 0)),
        int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
    )


def _newest_first(log_item: Any) -> list[Decision]:
    return list(reversed(recent_decisions(log_item)))[:DECISIONS_SHOWN]


# -- text ----------------------------------------------------------------------------------


def clock_time(minute: int, minute_seconds: float = 60.0) -> str:
    """When a room's minute began: "22:13 UTC", or with the seconds for a shortened minute."""
    start = time.gmtime(minute * minute_seconds)
    return time.strftime("%H:%M UTC" if minute_seconds == 60 else "%H:%M:%S UTC", start)


def clock_seconds(epoch_seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(epoch_seconds))


def describe_wait(seconds: int | None) -> str:
    if seconds is None:
        return "none: the room is off, visitors go straight to the origin"
    if seconds == 0:
        return "none: nobody is waiting"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def render_text(report: StatusReport, *, unicode: bool = True) -> str:
    where = "local" if report.local else report.region
    state = "ON" if report.enabled else "OFF"
    if report.enabled and report.closed:
        state = "CLOSED" + (f" ({report.closed_message})" if report.closed_message else "")
    elif report.enabled and report.held:
        state = "HELD (nobody admitted; places kept)"
    lines = [f"Room {report.room} ({where}): {state}"]
    rate = f"Rate: {count(report.rate, 'visitor')}/min"
    if report.slowed:
        rate += f", slowed by the governor from the operator's {report.operator_rate:,}"
    else:
        rate += f" (operator's rate {report.operator_rate:,})"
    lines.append(rate)
    if report.dynamic_rate_throttling:
        lines.extend(render_governor(report))
    else:
        lines.append("Governor: off (dynamic rate throttling is not enabled for this room)")
    queue = (
        f"Queue: {count(report.queue_visible + report.queue_in_flight, 'message')} "
        f"({report.queue_visible:,} waiting, {report.queue_in_flight:,} being admitted)"
    )
    if report.dead_letter:
        queue += f"; {report.dead_letter:,} in the dead-letter queue: look at them"
    lines.append(queue)
    lines.extend(render_schedule(report))
    if capped(report.max_inside):
        lines.append(
            f"Inside the shop: {report.inside:,} / {report.max_inside:,}; lately "
            f"{count(report.turnover, 'visitor')} a minute went in"
            + (f"; {count(report.left_line, 'visitor')} left the line" if report.left_line else "")
        )
    known = report.last_minute_arrivals
    arrivals = "arrivals not known yet" if known is None else count(known, "arrival")
    lines.append(
        f"Last minute ({clock_time(report.last_minute, report.minute_seconds)}): {arrivals}, "
        f"{report.last_minute_admitted:,} admitted"
    )
    lines.append(
        f"So far: {count(report.arrivals_total, 'arrival')}, {report.admitted_total:,} admitted, "
        f"{report.waiting:,} waiting"
    )
    lines.append(f"Estimated wait for a newcomer: {describe_wait(report.estimated_wait_seconds)}")
    lines.extend(render_hour(report, unicode=unicode))
    if report.public_url:
        lines.append(f"Public address: {report.public_url}")
    return "\n".join(lines)


def render_schedule(report: StatusReport) -> list[str]:
    """A scheduled event's start and draw, with what lets anyone check the drawn order."""
    if not report.starts_at and not report.draw_state:
        return []
    start = format_starts_at(report.starts_at) if report.starts_at else "none (cleared)"
    if report.draw_state == DRAW_DRAWN:
        return [
            f"Schedule: start {start}; {count(report.prequeue_drawn, 'pre-queue visitor')} drawn",
            f"Draw secret (published; its SHA-256 is the commitment): {report.draw_secret}",
        ]
    lines = [f"Schedule: start {start}; pre-queue open, drawn at the first minute from then"]
    if report.draw_commitment:
        lines.append(f"Draw commitment (SHA-256 of the secret): {report.draw_commitment}")
    return lines


def render_hour(report: StatusReport, *, unicode: bool = True) -> list[str]:
    """Arrivals, admissions and the line over the last hour: a heading and two rows each."""

    def heading(name: str, values: Sequence[int | None], unit: str, latest: str) -> str:
        known = [v for v in values if v is not None]
        last = "not known" if values[-1] is None else f"{values[-1]:,}"
        return f"{name}: peak {max(known, default=0):,}{unit}, {latest} {last}"

    series: list[tuple[str, Sequence[int | None]]] = [
        (heading("Arrivals", report.arrivals_per_minute, "/min", "this minute"),
         report.arrivals_per_minute),
        (heading("Admitted", report.admitted_per_minute, "/min", "this minute"),
         report.admitted_per_minute),
        (heading("Waiting", report.waiting_per_minute, "", "now"), report.waiting_per_minute),
    ]  # fmt: skip
    lines = [
        "Last hour, a column a minute, this minute on the right:"
        if report.minute_seconds == 60
        else f"Last {HOUR_MINUTES} minutes of {report.minute_seconds:g} s (--minute-seconds), "
        "a column a minute, this minute on the right:"
    ]
    for title, values in series:
        lines.append(title)
        lines.extend(render_chart(values, height=2, unicode=unicode)[:-1])
    lines.append(render_chart([], unicode=unicode, columns=len(report.admitted_per_minute))[-1])
    return lines


def render_governor(report: StatusReport) -> list[str]:
    """The governor's line, then its last few decisions (UTC), newest first."""
    decisions = report.governor_decisions
    newest = decisions[0] if decisions else None
    if newest is not None and newest.decision == BASELINE_PENDING:
        head = f"Governor: {newest.reason} (sampled URL {report.governor_sampled_url})"
    else:
        head = f"Governor: {report.governor_state or 'no baseline yet'}"
        if report.governor_baseline_median_ms is not None:
            head += f"; baseline median {report.governor_baseline_median_ms:,.0f} ms"
        if report.governor_slow_ms:
            head += f"; slow when p90 > {report.governor_slow_ms:,} ms"
        if newest is None:
            head += "; no check yet (one a minute)"
    lines = [head]
    if decisions:
        lines.append("Last decisions (UTC), newest first:")
        lines.extend(f"  {clock_seconds(d.at)} {d.describe()}" for d in decisions)
    return lines


_UNICODE_LEVELS = " ▁▂▃▄▅▆▇█"
_ASCII_LEVELS = " .:|#"


def render_chart(
    values: Sequence[int | None],
    *,
    height: int = 4,
    unicode: bool = True,
    columns: int | None = None,
) -> list[str]:
    """A column chart, one column per value (None: blank), `height` rows, then a time axis."""
    levels = _UNICODE_LEVELS if unicode else _ASCII_LEVELS
    steps = len(levels) - 1
    peak = max((v for v in values if v is not None), default=0)
    rows = []
    for row in range(height - 1, -1, -1):
        line = ""
        for value in values:
            # Eighths (or quarters in ASCII) of this row the column fills.
            filled = (
                0
                if peak == 0 or not value
                else math.ceil(value * height * steps / peak) - row * steps
            )
            line += levels[max(0, min(steps, filled))]
        rows.append("|" + line.rstrip())
    span = len(values) if columns is None else columns
    axis = f"-{span} min"
    rows.append("+" + axis + "now".rjust(max(span - len(axis), 4)))
    return rows
