"""In-memory CloudWatch metrics: what CloudWatch Logs extracts from the functions' EMF lines,
and the two calls that write and read them, answered as CloudWatch answers them.

A local room's functions write their Embedded Metric Format lines here (`ingest_emf`, what
CloudWatch Logs does with a Lambda's stdout), and `beekeeper report` reads them with
GetMetricData through the operator endpoint, exactly as it reads a deployed room's. The
conversion of an EMF document into PutMetricData's `MetricData` (`metric_data_from_emf`) is the
extraction the specification describes ("Specification: Embedded metric format", Amazon
CloudWatch User Guide): the directive's namespace and dimension sets, each metric's unit and
storage resolution, a numeric value or an array of them, the document's Timestamp.

Supported: PutMetricData with Value, or Values and Counts, a Unit, a Timestamp and a
StorageResolution; GetMetricData with MetricStat queries (Sum, SampleCount, Average, Minimum,
Maximum, percentiles `pNN.NN` and percentile ranks `PR(a:b)`), ScanBy and Label. Not
modelled: statistic sets, metric math, Metrics Insights, NextToken paging, alarms; a request
that asks for one of them fails loudly. Periods and retention follow core/telemetry.py's
rules: a period must be 1, 5, 10, 20, 30 or a multiple of 60; data is kept by the second
(StorageResolution 1) or by the minute, and a query asking for a period shorter than the data
of its start's age is still kept at gets no data points.

Percentiles are nearest-rank: pNN is the smallest value with at least NN% of the values at or
below it; PR(a:b) is the percentage of values v with a < v <= b ("Percentile rank",
CloudWatch statistics definitions). Neither is given for a period holding a negative value.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beekeeper.core import telemetry
from beekeeper.store.api import Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.errors import ServiceError
from beekeeper.store.timing import Timing

# The most data points one GetMetricData call returns (its MaxDatapoints default).
MAX_DATAPOINTS = 100_800
MAX_QUERIES = 500
_PERCENTILE = re.compile(r"^p(\d{1,2}(?:\.\d{1,2})?)$")
_PERCENTILE_RANK = re.compile(r"^PR\(([0-9.]*):([0-9.]*)\)$")
_SIMPLE = ("Sum", "SampleCount", "Average", "Minimum", "Maximum")

Dimensions = tuple[tuple[str, str], ...]  # sorted (name, value) pairs


@dataclass(frozen=True)
class Datum:
    namespace: str
    name: str
    dimensions: Dimensions
    at: float  # epoch seconds, truncated to the resolution it is kept at
    value: float
    count: float = 1.0


def metric_data_from_emf(line: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """One EMF document as PutMetricData requests: (namespace, MetricData) for each directive
    and dimension set. Timestamps are epoch seconds (boto3 takes them as they are)."""
    document = json.loads(line)
    metadata = document["_aws"]
    timestamp = metadata["Timestamp"] / 1000
    requests = []
    for directive in metadata["CloudWatchMetrics"]:
        for names in directive["Dimensions"]:
            dimensions = [{"Name": name, "Value": document[name]} for name in names]
            data = []
            for definition in directive["Metrics"]:
                value = document[definition["Name"]]
                datum: dict[str, Any] = {
                    "MetricName": definition["Name"],
                    "Dimensions": dimensions,
                    "Timestamp": timestamp,
                    "Unit": definition.get("Unit", "None"),
                    "StorageResolution": int(definition.get("StorageResolution", 60)),
                }
                if isinstance(value, list):
                    datum["Values"] = [float(v) for v in value]
                else:
                    datum["Value"] = float(value)
                data.append(datum)
            requests.append((directive["Namespace"], data))
    return requests


class CloudWatch(Api):
    """The metrics, and the CloudWatch API over them."""

    def __init__(self, timing: Timing, disturbance: Disturbance = CALM) -> None:
        super().__init__(disturbance, "UnknownOperationException")
        self._timing = timing
        self._lock = threading.Lock()
        self._data: list[Datum] = []
        # Called with the data each PutMetricData stored (a local room's saved line keeps them).
        self.observers: list[Callable[[list[Datum]], None]] = []
        self._actions = {
            "PutMetricData": self._put_metric_data,
            "GetMetricData": self._get_metric_data,
        }

    # -- writing ---------------------------------------------------------------------------

    def ingest_emf(self, line: str) -> None:
        """What CloudWatch Logs does with an EMF line a function wrote."""
        for namespace, data in metric_data_from_emf(line):
            self.handle("PutMetricData", {"Namespace": namespace, "MetricData": data})

    def _put_metric_data(self, request: dict[str, Any]) -> dict[str, Any]:
        namespace = request.get("Namespace")
        if not isinstance(namespace, str) or not namespace:
            raise _invalid("The parameter Namespace is required.", "MissingParameter")
        data = request.get("MetricData") or []
        stored = []
        for number, datum in enumerate(data, start=1):
            if "StatisticValues" in datum:
                raise NotImplementedError("PutMetricData with StatisticValues")
            at = _seconds(datum.get("Timestamp", self._timing.now()))
            resolution = int(datum.get("StorageResolution", 60))
            if resolution not in (1, 60):
                raise _invalid(
                    f"The value {resolution} for parameter MetricData.member.{number}."
                    "StorageResolution is invalid."
                )
            at = math.floor(at) if resolution == 1 else math.floor(at / 60) * 60
            dimensions = _dimensions(datum.get("Dimensions") or [])
            if "Values" in datum:
                values = [float(v) for v in datum["Values"]]
                counts = [float(c) for c in datum.get("Counts") or [1.0] * len(values)]
                if len(counts) != len(values):
                    raise _invalid(
                        f"The parameters MetricData.member.{number}.Values and "
                        f"MetricData.member.{number}.Counts must be of the same size.",
                        "InvalidParameterCombination",
                    )
                pairs = list(zip(values, counts, strict=True))
            else:
                pairs = [(float(datum["Value"]), 1.0)]
            stored += [
                Datum(namespace, datum["MetricName"], dimensions, at, value, count)
                for value, count in pairs
            ]
        with self._lock:
            self._data.extend(stored)
        for observer in self.observers:
            observer(stored)
        return {}

    def snapshot(self) -> list[Datum]:
        """Every value kept, in the order it came."""
        with self._lock:
            return list(self._data)

    def load(self, data: Iterable[Datum]) -> None:
        """Values kept before (a local room's saved line), as they were stored."""
        with self._lock:
            self._data.extend(data)

    # -- reading ---------------------------------------------------------------------------

    def _get_metric_data(self, request: dict[str, Any]) -> dict[str, Any]:
        queries = request.get("MetricDataQueries") or []
        if not 0 < len(queries) <= MAX_QUERIES:
            raise _invalid(f"MetricDataQueries must hold 1 to {MAX_QUERIES} queries.")
        if "NextToken" in request:
            raise NotImplementedError("GetMetricData with NextToken")
        start, end = _seconds(request["StartTime"]), _seconds(request["EndTime"])
        if end <= start:
            raise _invalid("The parameter EndTime must be greater than StartTime.")
        descending = request.get("ScanBy", "TimestampDescending") == "TimestampDescending"
        with self._lock:
            data = [d for d in self._data if start <= d.at < end]
        age = self._timing.now() - start
        results = []
        returned = 0
        for query in queries:
            if "MetricStat" not in query:
                raise NotImplementedError("GetMetricData with a metric math or Insights query")
            stat = query["MetricStat"]
            period = int(stat["Period"])
            if not telemetry.valid_period(period):
                raise _invalid(
                    f"The parameter MetricDataQueries.member.{query['Id']}.MetricStat.Period "
                    "must be 1, 5, 10, 20, 30 or a multiple of 60."
                )
            statistic = parse_statistic(stat["Stat"])
            metric = stat["Metric"]
            dimensions = _dimensions(metric.get("Dimensions") or [])
            wanted = (metric["Namespace"], metric["MetricName"], dimensions)
            mine = [d for d in data if (d.namespace, d.name, d.dimensions) == wanted]
            # Data older than its resolution is kept for is there only at a coarser period.
            shortest = telemetry.shortest_period(age, high_resolution=True)
            kept = shortest is not None and period % shortest == 0
            points = _aggregate(mine, start, end, period, statistic) if kept else []
            points.sort(reverse=descending)
            returned += len(points)
            if query.get("ReturnData", True):
                results.append(
                    {
                        "Id": query["Id"],
                        "Label": query.get("Label") or metric["MetricName"],
                        "Timestamps": [at for at, _ in points],
                        "Values": [value for _, value in points],
                        "StatusCode": "Complete",
                    }
                )
        if returned > int(request.get("MaxDatapoints", MAX_DATAPOINTS)):
            raise NotImplementedError("more data points than one GetMetricData call returns")
        return {"MetricDataResults": results, "Messages": []}


def _aggregate(
    data: Sequence[Datum], start: float, end: float, period: int, statistic: Statistic
) -> list[tuple[float, float]]:
    buckets: dict[int, list[Datum]] = {}
    for datum in data:
        buckets.setdefault(int((datum.at - start) // period), []).append(datum)
    points = []
    for index, members in buckets.items():
        value = statistic.of([(d.value, d.count) for d in members])
        if value is not None:
            points.append((start + index * period, value))
    return points


@dataclass(frozen=True)
class Statistic:
    kind: str  # one of _SIMPLE, "percentile" or "rank"
    fraction: float = 0.0  # a percentile's, 0-1
    low: float | None = None  # a percentile rank's bounds (None: open)
    high: float | None = None

    def of(self, weighted: Sequence[tuple[float, float]]) -> float | None:
        total = sum(count for _, count in weighted)
        if total <= 0:
            return None
        if self.kind == "Sum":
            return sum(v * c for v, c in weighted)
        if self.kind == "SampleCount":
            return total
        if self.kind == "Average":
            return sum(v * c for v, c in weighted) / total
        if self.kind == "Minimum":
            return min(v for v, _ in weighted)
        if self.kind == "Maximum":
            return max(v for v, _ in weighted)
        if any(v < 0 for v, _ in weighted):
            return None  # "not available for metrics when any of the values are negative"
        if self.kind == "percentile":
            return nearest_rank(weighted, self.fraction)
        return percentile_rank(weighted, self.low, self.high)


def nearest_rank(weighted: Iterable[tuple[float, float]], fraction: float) -> float | None:
    """The smallest value with at least `fraction` of the (value, count) weight at or below it."""
    ordered = sorted(weighted)
    total = sum(count for _, count in ordered)
    if total <= 0:
        return None
    needed = max(1.0, math.ceil(fraction * total - 1e-9))
    seen = 0.0
    for value, count in ordered:
        seen += count
        if seen >= needed:
            return value
    return ordered[-1][0]


def percentile_rank(
    weighted: Iterable[tuple[float, float]], low: float | None, high: float | None
) -> float | None:
    """The percentage of the weight with low < value <= high (a bound None: open)."""
    pairs = list(weighted)
    total = sum(count for _, count in pairs)
    if total <= 0:
        return None
    inside = sum(
        count
        for value, count in pairs
        if (low is None or value > low) and (high is None or value <= high)
    )
    return 100.0 * inside / total


def parse_statistic(text: str) -> Statistic:
    """A GetMetricData `Stat` as the store computes it."""
    if text in _SIMPLE:
        return Statistic(text)
    if match := _PERCENTILE.match(text):
        return Statistic("percentile", fraction=float(match.group(1)) / 100)
    if match := _PERCENTILE_RANK.match(text):
        low, high = (float(b) if b else None for b in match.groups())
        return Statistic("rank", low=low, high=high)
    if re.match(r"^(tm|wm|tc|ts|TM|WM|TC|TS|IQM)", text):
        raise NotImplementedError(f"the statistic {text}")
    raise _invalid(f"The statistic {text!r} is not valid.")


def _dimensions(dimensions: Iterable[dict[str, str]]) -> Dimensions:
    return tuple(sorted((d["Name"], d["Value"]) for d in dimensions))


def _seconds(value: Any) -> float:
    """A timestamp as botocore's JSON protocol sends it (epoch seconds), or a datetime."""
    if isinstance(value, datetime):
        return value.timestamp()
    return float(value)


def _invalid(message: str, code: str = "InvalidParameterValue") -> ServiceError:
    return ServiceError(code, message, query_code=code)
