"""What `beekeeper status` reports, read in a handful of requests, and how it is shown.

One BatchGetItem (chunked by 100 keys) reads the config, governor and counter items, the last
hour's `minute#<m>` and `governor#<m>` items; one GetQueueAttributes per queue reads the depth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from beekeeper.cli.rooms import Deployment
from beekeeper.cli.table import batch_get, from_item
from beekeeper.core.datamodel import (
    GOVERNOR_KEY,
    governor_decision_key,
    minute_key,
)
from beekeeper.core.polling import eta_seconds
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas.room_state import snapshot_from_items, snapshot_keys

HOUR_MINUTES = 60
_QUEUE_ATTRIBUTES = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]


@dataclass(frozen=True)
class GovernorDecision:
    minute: int
    decision: str
    mean_ms: float | None
    rate_before: int | None
    rate_after: int | None


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
    governor_last_decision: GovernorDecision | None
    queue_visible: int
    queue_in_flight: int
    dead_letter: int | None
    arrivals_total: int
    admitted_total: int
    waiting: int
    last_minute: int
    last_minute_arrivals: int | None
    last_minute_admitted: int
    estimated_wait_seconds: int | None
    chart_first_minute: int
    admitted_per_minute: list[int]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_status(
    *,
    settings: RoomSettings,
    deployment: Deployment,
    dynamodb: Any,
    sqs: Any,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> StatusReport:
    now = int(clock())
    this_minute = now // 60
    hour = range(this_minute - HOUR_MINUTES, this_minute + 1)  # the last hour and this minute
    found = batch_get(
        dynamodb,
        deployment.table_name,
        [GOVERNOR_KEY, *snapshot_keys(settings)]
        + [minute_key(m) for m in hour]
        + [governor_decision_key(m) for m in hour],
        sleep,
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
    chart_minutes = range(this_minute - HOUR_MINUTES, this_minute)
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
        governor_state=(items.get(GOVERNOR_KEY) or {}).get("state"),
        governor_last_decision=_last_decision(items, hour),
        queue_visible=visible,
        queue_in_flight=in_flight,
        dead_letter=dead_letter,
        arrivals_total=arrivals,
        admitted_total=admitted,
        waiting=waiting,
        last_minute=last,
        last_minute_arrivals=last_arrivals,
        last_minute_admitted=minute_value(last, "admitted") or 0,
        estimated_wait_seconds=eta_seconds(waiting, config.rate) if config.enabled else None,
        chart_first_minute=chart_minutes.start,
        admitted_per_minute=[minute_value(m, "admitted") or 0 for m in chart_minutes],
    )


def _queue_depth(sqs: Any, queue_url: str) -> tuple[int, int]:
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=_QUEUE_ATTRIBUTES)[
        "Attributes"
    ]
    return (
        int(attributes.get("ApproximateNumberOfMessages", 0)),
        int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
    )


def _last_decision(items: dict[str, dict[str, Any]], minutes: range) -> GovernorDecision | None:
    for minute in reversed(minutes):
        item = items.get(governor_decision_key(minute))
        if item is not None:
            return GovernorDecision(
                minute=minute,
                decision=str(item.get("decision", "?")),
                mean_ms=item.get("mean_ms"),
                rate_before=item.get("rate_before"),
                rate_after=item.get("rate_after"),
            )
    return None


# -- text ----------------------------------------------------------------------------------


def clock_time(epoch_minute: int) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(epoch_minute * 60))


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
    lines = [f"Room {report.room} ({where}): {'ON' if report.enabled else 'OFF'}"]
    rate = f"Rate: {report.rate:,} visitors/min"
    if report.slowed:
        rate += f", slowed by the governor from the operator's {report.operator_rate:,}"
    else:
        rate += f" (operator's rate {report.operator_rate:,})"
    lines.append(rate)
    if report.dynamic_rate_throttling:
        governor = f"Governor: {report.governor_state or 'no baseline yet'}"
        decision = report.governor_last_decision
        if decision is not None:
            governor += f"; last decision {clock_time(decision.minute)}: {decision.decision}"
            if decision.mean_ms is not None:
                governor += f" (mean {decision.mean_ms:,.0f} ms)"
        lines.append(governor)
    else:
        lines.append("Governor: off (dynamic rate throttling is not enabled for this room)")
    queue = (
        f"Queue: {report.queue_visible + report.queue_in_flight:,} messages "
        f"({report.queue_visible:,} waiting, {report.queue_in_flight:,} being admitted)"
    )
    if report.dead_letter:
        queue += f"; {report.dead_letter:,} in the dead-letter queue: look at them"
    lines.append(queue)
    known = report.last_minute_arrivals
    arrivals = "arrivals not known yet" if known is None else f"{known:,} arrivals"
    lines.append(
        f"Last minute ({clock_time(report.last_minute)}): {arrivals}, "
        f"{report.last_minute_admitted:,} admitted"
    )
    lines.append(
        f"So far: {report.arrivals_total:,} arrivals, {report.admitted_total:,} admitted, "
        f"{report.waiting:,} waiting"
    )
    lines.append(f"Estimated wait for a newcomer: {describe_wait(report.estimated_wait_seconds)}")
    lines.append(f"Admitted per minute, last hour (peak {max(report.admitted_per_minute):,}):")
    lines.extend(render_chart(report.admitted_per_minute, unicode=unicode))
    return "\n".join(lines)


_UNICODE_LEVELS = " ▁▂▃▄▅▆▇█"
_ASCII_LEVELS = " .:|#"


def render_chart(values: list[int], *, height: int = 4, unicode: bool = True) -> list[str]:
    """A column chart, one column per value, `height` rows, then a time axis."""
    levels = _UNICODE_LEVELS if unicode else _ASCII_LEVELS
    steps = len(levels) - 1
    peak = max(values, default=0)
    rows = []
    for row in range(height - 1, -1, -1):
        line = ""
        for value in values:
            # Eighths (or quarters in ASCII) of this row the column fills.
            filled = 0 if peak == 0 else math.ceil(value * height * steps / peak) - row * steps
            line += levels[max(0, min(steps, filled))]
        rows.append("|" + line.rstrip())
    axis = f"-{len(values)} min"
    rows.append("+" + axis + "now".rjust(max(len(values) - len(axis), 4)))
    return rows
