"""The time a report covers: `--since`/`--until` as the operator writes them, or the room's last
event, found in its own metrics.

A TIME is an ISO 8601 time (`2026-05-01T09:00`, `2026-05-01 09:00:30+02:00`, `...Z`; UTC unless
it carries an offset), a time ago (`90m`, `2h`, `3d`, `1w`; `45s` too) or `now`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from beekeeper.cli.errors import UserError

_AGO = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d|w)$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400, "w": 604_800}
TIME_HELP = (
    "an ISO 8601 time such as 2026-05-01T09:00 (UTC unless it has an offset such as +02:00), "
    "a time ago such as 90m, 2h or 3d, or now"
)
# How far back the last event is looked for: the 1-minute data CloudWatch keeps.
LOOK_BACK_SECONDS = 15 * 86_400
# An hour without arrivals, admissions or a line ends an event.
QUIET_GAP_SECONDS = 3600
DEFAULT_SECONDS = 24 * 3600  # the window when no event is found
# The longest window the report draws (a point a minute: a day of minutes).
MAX_WINDOW_SECONDS = 24 * 3600


class WindowError(UserError):
    """A --since or --until the report can not use; the message says what to write."""


def parse_time(text: str, *, now: float, option: str) -> float:
    """`text` as epoch seconds; a WindowError naming `option` when it is not a TIME."""
    cleaned = text.strip()
    if cleaned.lower() == "now":
        return now
    match = _AGO.match(cleaned)
    if match:
        amount, unit = float(match.group(1)), match.group(2).lower()
        return now - amount * _UNIT_SECONDS[unit]
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise WindowError(f"{option} {text!r} is not a time: use {TIME_HELP}.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass(frozen=True)
class Window:
    since: float  # epoch seconds, on a bucket boundary
    until: float
    how: str  # "given", "last event" or "default"
    said: str  # how the window was chosen, in a sentence ("" when given)

    @property
    def seconds(self) -> float:
        return self.until - self.since


def given_window(
    since: str | None, until: str | None, *, now: float, bucket_seconds: float
) -> Window | None:
    """The window the options give, aligned to whole buckets; None when neither is given."""
    if since is None and until is None:
        return None
    end = parse_time(until, now=now, option="--until") if until is not None else now
    start = (
        parse_time(since, now=now, option="--since") if since is not None else end - DEFAULT_SECONDS
    )
    if end > now:
        end = now
    if start >= end:
        raise WindowError(
            "--since must be before --until (and before now): "
            f"{_iso(start)} is not before {_iso(end)}."
        )
    if end - start > MAX_WINDOW_SECONDS + 1:
        raise WindowError(
            f"The report covers at most {MAX_WINDOW_SECONDS // 3600} hours (a point a "
            f"minute); {_iso(start)} to {_iso(end)} is longer: narrow --since or --until."
        )
    return aligned(start, end, bucket_seconds, how="given", said="")


def aligned(start: float, end: float, bucket_seconds: float, *, how: str, said: str) -> Window:
    """Start on a bucket boundary at or before `start`, end on one at or after `end`."""
    first = math.floor(start / bucket_seconds) * bucket_seconds
    last = math.ceil(end / bucket_seconds) * bucket_seconds
    return Window(first, max(last, first + bucket_seconds), how, said)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
