"""The room's custom metrics as CloudWatch Embedded Metric Format lines, one per minute.

A function's code records what it knows the moment it knows it (`count`, `level`); nothing is
written per request. Values are kept per container and per minute and written as ONE JSON
line for that minute on stdout, where Lambda hands it to CloudWatch Logs, which turns it into
metrics (no API call). At 5,000 arrivals/s a line per request would cost more in log ingestion
than the room itself; a line per container and minute costs next to nothing.

When a minute's line is written:
- the first value recorded in a later minute writes the earlier minute's line first;
- `flush_ended()` (the producer calls it after every request) writes a line whose minute has
  ended. Lambda freezes a container between requests, so a container can not write on a
  timer: its last minute is written when it next answers, stamped with that minute, and is
  lost if Lambda retires the container first;
- `flush()` writes everything now: the trigger, consumer and governor call it when their run
  ends (a run is one minute's work).

Standard library only: the Lambda asset ships it. Metric names, units, the namespace and the
dimension come from core/telemetry.py, which the dashboard and alarms use too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from beekeeper.core.telemetry import DIMENSION_SETS, METRIC_NAMESPACE, ROOM_DIMENSION, Metric

MINUTE_SECONDS = 60


class MetricSink(Protocol):
    def count(self, metric: Metric, value: int = 1) -> None:
        """Add `value` to this minute's total of `metric`."""
        ...

    def level(self, metric: Metric, value: float) -> None:
        """Set this minute's `metric` (the last value recorded in the minute stands)."""
        ...

    def flush_ended(self) -> None:
        """Write the held minute if it has ended (after every request)."""
        ...

    def flush(self) -> None:
        """Write what is held now (when a run of one minute's work ends)."""
        ...


class Discard:
    """Records nothing: code run outside Lambda (tests, the simulator, local mode)."""

    def count(self, metric: Metric, value: int = 1) -> None:
        pass

    def level(self, metric: Metric, value: float) -> None:
        pass

    def flush_ended(self) -> None:
        pass

    def flush(self) -> None:
        pass


DISCARD = Discard()


def print_line(line: str) -> None:
    print(line, flush=True)


@dataclass
class MinuteMetrics:
    """One container's metrics, aggregated per minute and written as EMF lines."""

    room: str
    clock: Callable[[], float]
    write: Callable[[str], None] = print_line
    _minute: int | None = field(default=None, init=False)
    _values: dict[str, float] = field(default_factory=dict, init=False)
    _metrics: dict[str, Metric] = field(default_factory=dict, init=False)

    def count(self, metric: Metric, value: int = 1) -> None:
        self._bucket(metric)
        self._values[metric.name] = self._values.get(metric.name, 0) + value

    def level(self, metric: Metric, value: float) -> None:
        self._bucket(metric)
        self._values[metric.name] = value

    def flush_ended(self) -> None:
        """Write the held minute if it has ended."""
        if self._minute is not None and self._current_minute() > self._minute:
            self.flush()

    def flush(self) -> None:
        """Write the held minute's line now (nothing when nothing was recorded)."""
        if self._minute is not None and self._values:
            self.write(emf_line(self.room, self._minute, self._metrics, self._values))
        self._minute = None
        self._values = {}
        self._metrics = {}

    def _current_minute(self) -> int:
        return math.floor(self.clock() / MINUTE_SECONDS)

    def _bucket(self, metric: Metric) -> None:
        minute = self._current_minute()
        if self._minute is not None and minute != self._minute:
            self.flush()
        self._minute = minute
        self._metrics[metric.name] = metric


def emf_line(room: str, minute: int, metrics: dict[str, Metric], values: dict[str, float]) -> str:
    """One EMF document: the minute's values under the room's dimension, stamped with the
    minute's start so CloudWatch files them under that minute wherever they are written."""
    document: dict[str, object] = {
        "_aws": {
            "Timestamp": minute * MINUTE_SECONDS * 1000,
            "CloudWatchMetrics": [
                {
                    "Namespace": METRIC_NAMESPACE,
                    "Dimensions": [list(names) for names in DIMENSION_SETS],
                    "Metrics": [
                        {"Name": name, "Unit": metrics[name].unit} for name in sorted(values)
                    ],
                }
            ],
        },
        ROOM_DIMENSION: room,
    }
    for name in sorted(values):
        value = values[name]
        document[name] = int(value) if float(value).is_integer() else value
    return json.dumps(document, separators=(",", ":"))
