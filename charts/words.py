"""Figures said in words: numbers, durations and clock times as an operator reads them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from beekeeper.core.words import count


def duration(seconds: float) -> str:
    """A wait as a person says it: "under a second", "40 seconds", "7 minutes", "1 h 5 min"."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return count(round(seconds), "second")
    minutes = round(seconds / 60)
    if minutes < 60:
        return count(minutes, "minute")
    return f"{minutes // 60} h {minutes % 60} min"


def about(seconds: float) -> str:
    """ "about 7 minutes", "under a second"."""
    return duration(seconds) if seconds < 1 else f"about {duration(seconds)}"


def short_duration(seconds: float) -> str:
    """For a chart's label: "0.4 s", "42 s", "6.6 min", "2.1 h"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def within(seconds: float) -> str:
    """An upper bound said without rounding it down: 'within 8 minutes' for 7 min 20 s."""
    if seconds < 1:
        return "within a second"
    if seconds < 90:
        return f"within {count(math.ceil(seconds), 'second')}"
    return f"within {count(math.ceil(seconds / 60), 'minute')}"


@dataclass(frozen=True)
class WaitsSaid:
    """How long visitors waited, in words that never contradict one another: each percentile
    said as an upper bound ("within 3 minutes"), never above the longest wait, which is said
    to the second ("2 min 28 s"). The figures come from CloudWatch (each statistic a query of
    its own) or the simulator; the words keep their order whatever is handed in."""

    p50: str
    p90: str
    p99: str
    longest: str
    # What each says, in whole seconds: p50 <= p90 <= p99 <= longest.
    bounds: tuple[int, int, int, int]

    @classmethod
    def of(cls, p50: float, p90: float, p99: float, longest: float) -> WaitsSaid:
        longest = max(0.0, longest)
        # The longest to the second (to the minute past an hour, as it is said), up.
        top = max(1, math.ceil(longest - 1e-9))
        if top >= 3600:
            top = math.ceil(top / 60) * 60
        bounds: list[int] = []
        for value in (p50, p90, p99):
            bound = max(1, math.ceil(max(0.0, value) - 1e-9))
            if bound >= 90:
                bound = math.ceil(bound / 60) * 60  # "within 3 minutes"
            bounds.append(min(top, max(bounds[-1] if bounds else 1, bound)))
        said = [
            "within a second" if bound <= 1 else f"within {_seconds_said(bound)}"
            for bound in bounds
        ]
        return cls(
            said[0],
            said[1],
            said[2],
            "under a second" if longest < 1 else _seconds_said(top),
            (bounds[0], bounds[1], bounds[2], top),
        )


def _seconds_said(seconds: int) -> str:
    """Whole seconds: "45 seconds", "3 minutes", "2 min 28 s", "1 h 5 min"."""
    if seconds < 90:
        return count(seconds, "second")
    minutes, rest = divmod(seconds, 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return count(minutes, "minute") if rest == 0 else f"{minutes} min {rest} s"


def clock(moment: datetime) -> str:
    """ "9:05", or "9:05:30" when the moment is not on a whole minute."""
    text = f"{moment.hour}:{moment.minute:02d}"
    return text if moment.second == 0 else f"{text}:{moment.second:02d}"


class Timeline:
    """Clock times of a chart's time axis: minute 0 is `start`; a local room's minutes may be
    shortened (`minute_seconds`)."""

    def __init__(self, start: datetime, minute_seconds: float = 60.0) -> None:
        self.start = start
        self.minute_seconds = minute_seconds

    def at(self, minutes: float) -> str:
        return clock(self.start + timedelta(seconds=round(minutes * self.minute_seconds)))


def listed(parts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
