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

A distribution (`sample`: one value per visitor, such as the wait) is written as value arrays,
which the EMF specification allows ("A metric target MUST be a numeric value or an array of
numeric values. Numeric array metric targets MUST NOT have more than 100 members",
Specification: Embedded metric format, Amazon CloudWatch User Guide): the minute's first 100
values ride on its line, and each further 100 on a line of their own, stamped with the same
minute. CloudWatch keeps every value, so percentiles can be read from them; a value below zero
would make them unavailable ("Percentile statistics are not available for metrics when any of
the metric values are negative numbers", GetMetricStatistics), so none is written. A visitor
costs about 6 bytes of log.

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
# The most members of one EMF value array (the specification's limit).
MAX_VALUES_PER_LINE = 100
# Values of a distribution are written to the millisecond.
SAMPLE_DECIMALS = 3


class MetricSink(Protocol):
    def count(self, metric: Metric, value: int = 1) -> None:
        """Add `value` to this minute's total of `metric`."""
        ...

    def level(self, metric: Metric, value: float) -> None:
        """Set this minute's `metric` (the last value recorded in the minute stands)."""
        ...

    def sample(self, metric: Metric, value: float) -> None:
        """Add one value of the distribution `metric` (a visitor's wait, say) to this minute."""
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

    def sample(self, metric: Metric, value: float) -> None:
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
    """One container's metrics, aggregated per minute and written as EMF lines.

    `minute_seconds`: a local room's shortened minute (in Lambda, always 60); a minute shorter
    than 60 s is written as a high-resolution metric (EMF's StorageResolution 1), as CloudWatch
    keeps such data only at that resolution.
    """

    room: str
    clock: Callable[[], float]
    write: Callable[[str], None] = print_line
    minute_seconds: float = MINUTE_SECONDS
    _minute: int | None = field(default=None, init=False)
    _values: dict[str, float] = field(default_factory=dict, init=False)
    _samples: dict[str, list[float]] = field(default_factory=dict, init=False)
    _metrics: dict[str, Metric] = field(default_factory=dict, init=False)

    def count(self, metric: Metric, value: int = 1) -> None:
        self._bucket(metric)
        self._values[metric.name] = self._values.get(metric.name, 0) + value

    def level(self, metric: Metric, value: float) -> None:
        self._bucket(metric)
        self._values[metric.name] = value

    def sample(self, metric: Metric, value: float) -> None:
        self._bucket(metric)
        self._samples.setdefault(metric.name, []).append(round(max(0.0, value), SAMPLE_DECIMALS))

    def flush_ended(self) -> None:
        """Write the held minute if it has ended."""
        if self._minute is not None and self._current_minute() > self._minute:
            self.flush()

    def flush(self) -> None:
        """Write the held minute's line now (nothing when nothing was recorded)."""
        if self._minute is not None and (self._values or self._samples):
            for line in emf_lines(
                self.room,
                round(self._minute * self.minute_seconds * 1000),
                self._metrics,
                self._values,
                self._samples,
                high_resolution=self.minute_seconds < MINUTE_SECONDS,
            ):
                self.write(line)
        self._minute = None
        self._values = {}
        self._samples = {}
        self._metrics = {}

    def _current_minute(self) -> int:
        return math.floor(self.clock() / self.minute_seconds)

    def _bucket(self, metric: Metric) -> None:
        minute = self._current_minute()
        if self._minute is not None and minute != self._minute:
            self.flush()
        self._minute = minute
        self._metrics[metric.name] = metric


def emf_lines(
    room: str,
    timestamp_ms: int,
    metrics: dict[str, Metric],
    values: dict[str, float],
    samples: dict[str, list[float]] | None = None,
    *,
    high_resolution: bool = False,
) -> list[str]:
    """The minute's EMF documents: its values under the room's dimension, stamped with the
    minute's start so CloudWatch files them under that minute wherever they are written; a
    distribution's values in arrays of at most 100, the first on the minute's line."""
    samples = {name: list(v) for name, v in (samples or {}).items() if v}
    lines = []
    first = True
    while first or any(samples.values()):
        members: dict[str, float | list[float]] = dict(values) if first else {}
        for name, pending in samples.items():
            if pending:
                members[name] = pending[:MAX_VALUES_PER_LINE]
                del pending[:MAX_VALUES_PER_LINE]
        lines.append(_document(room, timestamp_ms, metrics, members, high_resolution))
        first = False
    return lines


def _document(
    room: str,
    timestamp_ms: int,
    metrics: dict[str, Metric],
    members: dict[str, float | list[float]],
    high_resolution: bool,
) -> str:
    definitions: list[dict[str, object]] = []
    for name in sorted(members):
        definition: dict[str, object] = {"Name": name, "Unit": metrics[name].unit}
        if high_resolution:
            definition["StorageResolution"] = 1
        definitions.append(definition)
    document: dict[str, object] = {
        "_aws": {
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": METRIC_NAMESPACE,
                    "Dimensions": [list(names) for names in DIMENSION_SETS],
                    "Metrics": definitions,
                }
            ],
        },
        ROOM_DIMENSION: room,
    }
    for name in sorted(members):
        value = members[name]
        document[name] = [_number(v) for v in value] if isinstance(value, list) else _number(value)
    return json.dumps(document, separators=(",", ":"))


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
