"""A room's metrics read back from CloudWatch with GetMetricData, as series the report draws.

One call asks for many metrics at once (up to 500 queries); a window too long for one answer
(100,800 data points) is read in slices. Each value is filed under its bucket, the report's
minute: the period asked for is the bucket itself, or, for a local room whose minutes are
shorter than CloudWatch's, one second (its high-resolution data), whose values are then
combined as their statistic says (sums add up, extremes take the extreme). A minute's values
are stamped with its start and kept by CloudWatch to the second below it, so a value at `t`
belongs to the bucket starting in [t, t + 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from beekeeper.core import telemetry

MAX_DATAPOINTS = 100_000  # per call: under GetMetricData's 100,800
MAX_QUERIES = 500

Values = dict[int, float]  # bucket index (from the window's start) -> value


@dataclass(frozen=True)
class Query:
    id: str  # GetMetricData's: a lowercase letter, then letters, digits and underscores
    namespace: str
    name: str
    dimensions: tuple[tuple[str, str], ...]
    stat: str

    def request(self, period: int) -> dict[str, Any]:
        return {
            "Id": self.id,
            "MetricStat": {
                "Metric": {
                    "Namespace": self.namespace,
                    "MetricName": self.name,
                    "Dimensions": [{"Name": n, "Value": v} for n, v in self.dimensions],
                },
                "Period": period,
                "Stat": self.stat,
            },
            "ReturnData": True,
        }


def room_query(query_id: str, room: str, metric: telemetry.Metric, stat: str = "") -> Query:
    """One of the room's own metrics (core/telemetry.py), by its statistic unless `stat`."""
    return Query(
        query_id,
        telemetry.METRIC_NAMESPACE,
        metric.name,
        ((telemetry.ROOM_DIMENSION, room),),
        stat or metric.statistic,
    )


def origin_query(query_id: str, api_name: str) -> Query:
    """API Gateway's own count of the requests the room's API answered."""
    return Query(
        query_id,
        telemetry.API_GATEWAY_NAMESPACE,
        telemetry.API_GATEWAY_REQUESTS,
        ((telemetry.API_NAME_DIMENSION, api_name),),
        "Sum",
    )


def edge_query(query_id: str, distribution_id: str) -> Query:
    """CloudFront's count of the viewer requests the room's distribution answered (us-east-1)."""
    return Query(
        query_id,
        telemetry.CLOUDFRONT_NAMESPACE,
        telemetry.CLOUDFRONT_REQUESTS,
        tuple(
            sorted(
                [
                    (telemetry.DISTRIBUTION_DIMENSION, distribution_id),
                    telemetry.CLOUDFRONT_REGION_DIMENSION,
                ]
            )
        ),
        "Sum",
    )


class MetricReader:
    def __init__(self, cloudwatch: Any) -> None:
        self._cloudwatch = cloudwatch
        self.calls = 0

    def read(
        self,
        queries: Sequence[Query],
        *,
        start: float,
        end: float,
        period: int,
        bucket_seconds: float | None = None,
    ) -> dict[str, Values]:
        """Each query's values by bucket (`bucket_seconds`, default: the period) of
        [start, end), `start` on a bucket boundary. A query with no data point has an empty
        dict."""
        bucket = bucket_seconds or period
        buckets = math.ceil((end - start) / bucket - 1e-9)
        found: dict[str, Values] = {q.id: {} for q in queries}
        by_id = {q.id: q for q in queries}
        first, last = math.floor(start), math.ceil(end)
        for batch_start in range(0, len(queries), MAX_QUERIES):
            batch = list(queries[batch_start : batch_start + MAX_QUERIES])
            points_per_query = max(1, math.ceil((last - first) / period))
            slices = math.ceil(points_per_query * len(batch) / MAX_DATAPOINTS)
            step = math.ceil(points_per_query / slices) * period
            slice_start = first
            while slice_start < last:
                slice_end = min(last, slice_start + step)
                for result in self._results(batch, slice_start, slice_end, period):
                    values = found[result["Id"]]
                    combine = _combiner(by_id[result["Id"]].stat)
                    for at, value in zip(result["Timestamps"], result["Values"], strict=True):
                        index = math.ceil((_epoch(at) - start) / bucket - 1e-9)
                        if 0 <= index < buckets:
                            values[index] = combine(values.get(index), float(value))
                slice_start = slice_end
        return found

    def _results(
        self, batch: list[Query], start: float, end: float, period: int
    ) -> list[dict[str, Any]]:
        request: dict[str, Any] = {
            "MetricDataQueries": [q.request(period) for q in batch],
            "StartTime": datetime.fromtimestamp(start, UTC),
            "EndTime": datetime.fromtimestamp(end, UTC),
            "ScanBy": "TimestampAscending",
        }
        results: list[dict[str, Any]] = []
        while True:
            self.calls += 1
            response = self._cloudwatch.get_metric_data(**request)
            results += response.get("MetricDataResults", [])
            token = response.get("NextToken")
            if not token:
                return _merged(results)
            request["NextToken"] = token


def _merged(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A paged answer's results, one per query id."""
    merged: dict[str, dict[str, Any]] = {}
    for result in results:
        into = merged.setdefault(result["Id"], {"Id": result["Id"], "Timestamps": [], "Values": []})
        into["Timestamps"] += list(result.get("Timestamps", []))
        into["Values"] += list(result.get("Values", []))
    return list(merged.values())


def _combiner(stat: str) -> Any:
    if stat in ("Sum", "SampleCount"):
        return lambda old, new: new if old is None else old + new
    if stat == "Maximum":
        return lambda old, new: new if old is None else max(old, new)
    if stat == "Minimum":
        return lambda old, new: new if old is None else min(old, new)
    return lambda old, new: new  # a percentile is only read with its bucket as the period


def _epoch(value: Any) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)
