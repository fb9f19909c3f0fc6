"""What an event report holds: the figures `beekeeper report` reads from a room's metrics
(beekeeper.cli.event_report) and the page draws (beekeeper.charts.event_report). Standard
library only, so the reader needs no charts; kept here so that charts/ imports nothing of the
CLI."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from beekeeper.room.governor_records import Decision

# A local room's edge and gateway run in its own process: what they answer is counted in its
# live view (local/operator_view.py), not in the metrics a report reads.
LOCAL_REQUESTS = (
    "A local room's edge and origin run in its own process: their requests are counted in its "
    "live view, not in its metrics"
)


@dataclass(frozen=True)
class Waits:
    timed: int  # admissions whose wait was measured
    p50: float | None
    p90: float | None
    p99: float | None
    longest: float | None
    bin_seconds: int  # histogram bin i holds waits in [i x bin_seconds, (i + 1) x bin_seconds)
    counts: list[int]


@dataclass(frozen=True)
class Capacity:
    inside_per_minute: list[int | None]  # as each minute began
    max_inside_per_minute: list[int | None]
    left_line_per_minute: list[int]
    left_shop_per_minute: list[int]
    no_shows_per_minute: list[int]
    sessions_ended_per_minute: list[int]


@dataclass(frozen=True)
class EventReport:
    room: str
    local: bool
    generated_at: int
    since: float  # epoch seconds: the first minute's start
    until: float
    window: str  # "given", "last event" or "default"
    window_said: str  # how the window was found ("" when given)
    minute_seconds: float  # a point of the per-minute series, in seconds
    arrivals_per_minute: list[int | None]  # None: no data for the minute
    admitted_per_minute: list[int]
    rate_per_minute: list[int | None]  # the effective rate; 0 while the room was off
    operator_rate_per_minute: list[int | None]
    waiting_per_minute: list[int | None]  # in line as each minute began
    rejoined_per_minute: list[int]
    waits: Waits | None
    wait_p50_per_minute: list[float | None] | None  # by minute of admission
    wait_p90_per_minute: list[float | None] | None
    capacity: Capacity | None
    governor: bool  # dynamic rate throttling on
    governor_per_minute: dict[str, list[int]]  # halved, held, raised
    governor_decisions: list[Decision]  # the room's last decisions within the window
    origin_requests_per_minute: list[int | None] | None  # None: not known (a local room)
    edge: bool
    edge_requests_per_minute: list[int | None] | None
    # The room's counters now (since its last reset), read as `beekeeper status` reads them.
    arrivals_total: int
    admitted_total: int
    waiting_now: int
    notes: list[str] = field(default_factory=list)

    @property
    def minutes(self) -> int:
        return len(self.admitted_per_minute)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["governor_decisions"] = [d.to_json() for d in self.governor_decisions]
        return data
