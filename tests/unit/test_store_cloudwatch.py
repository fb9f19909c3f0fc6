"""The store's CloudWatch where moto has no answer: percentiles, percentile ranks, periods and
retention, held to CloudWatch's documented definitions with known inputs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.store.client import StoreClient
from beekeeper.store.cloudwatch import (
    CloudWatch,
    metric_data_from_emf,
    nearest_rank,
    percentile_rank,
)

START = 1_800_000_000 - 1_800_000_000 % 60


class At:
    def __init__(self, now: float) -> None:
        self.now_ = now

    def now(self) -> float:
        return self.now_

    def guard(self) -> Any:
        raise AssertionError("CloudWatch keeps its own lock")


def store(now: float = START + 600) -> tuple[CloudWatch, Any]:
    cloudwatch = CloudWatch(At(now))
    return cloudwatch, StoreClient(cloudwatch)


def put(client: Any, values: list[float], *, at: float = START, resolution: int = 60) -> None:
    client.put_metric_data(
        Namespace="Beekeeper",
        MetricData=[
            {
                "MetricName": "Wait",
                "Dimensions": [{"Name": "Room", "Value": "r"}],
                "Timestamp": at,
                "Values": values,
                "Unit": "Seconds",
                "StorageResolution": resolution,
            }
        ],
    )


def read(client: Any, stats: list[str], *, period: int = 60, start: float = START,
         end: float = START + 60) -> dict[str, list[float]]:  # fmt: skip
    response = client.get_metric_data(
        MetricDataQueries=[
            {
                "Id": f"q{i}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "Beekeeper",
                        "MetricName": "Wait",
                        "Dimensions": [{"Name": "Room", "Value": "r"}],
                    },
                    "Period": period,
                    "Stat": stat,
                },
            }
            for i, stat in enumerate(stats)
        ],
        StartTime=start,
        EndTime=end,
        ScanBy="TimestampAscending",
    )
    return {stats[int(r["Id"][1:])]: r["Values"] for r in response["MetricDataResults"]}


def test_percentiles_are_nearest_rank() -> None:
    values = [(float(v), 1.0) for v in range(1, 101)]  # 1 .. 100
    assert nearest_rank(values, 0.5) == 50
    assert nearest_rank(values, 0.9) == 90
    assert nearest_rank(values, 0.99) == 99
    assert nearest_rank(values, 1.0) == 100
    assert nearest_rank([(3.0, 1.0), (1.0, 1.0), (2.0, 1.0)], 0.5) == 2
    # Counts weigh: 9 visitors waited 1 s, one waited 60 s.
    assert nearest_rank([(1.0, 9.0), (60.0, 1.0)], 0.9) == 1
    assert nearest_rank([(1.0, 9.0), (60.0, 1.0)], 0.91) == 60
    assert nearest_rank([], 0.5) is None


def test_a_percentile_rank_excludes_its_lower_bound_and_includes_its_upper() -> None:
    values = [(float(v), 1.0) for v in (10, 20, 30, 40)]
    assert percentile_rank(values, None, 20) == 50
    assert percentile_rank(values, 20, None) == 50
    assert percentile_rank(values, 10, 30) == 50
    assert percentile_rank(values, None, 9.99) == 0


def test_get_metric_data_reads_percentiles_and_ranks_of_the_values_written() -> None:
    _, client = store()
    put(client, [float(v) for v in range(1, 101)])
    got = read(client, ["p50", "p90", "p99", "PR(:60)", "PR(60:)", "SampleCount"])
    assert got == {
        "p50": [50.0],
        "p90": [90.0],
        "p99": [99.0],
        "PR(:60)": [60.0],
        "PR(60:)": [40.0],
        "SampleCount": [100.0],
    }


def test_a_negative_value_makes_percentiles_unavailable() -> None:
    _, client = store()
    put(client, [-1.0, 5.0, 7.0])
    got = read(client, ["p50", "PR(:6)", "Sum"])
    assert got == {"p50": [], "PR(:6)": [], "Sum": [11.0]}


def test_a_statistic_the_store_does_not_compute_fails_loudly() -> None:
    cloudwatch, _ = store()
    request = {
        "MetricDataQueries": [
            {
                "Id": "q",
                "MetricStat": {
                    "Metric": {"Namespace": "Beekeeper", "MetricName": "Wait"},
                    "Period": 60,
                    "Stat": "TM(10%:90%)",
                },
            }
        ],
        "StartTime": START,
        "EndTime": START + 60,
    }
    with pytest.raises(NotImplementedError):
        cloudwatch.handle("GetMetricData", request)


@pytest.mark.parametrize("period", [7, 45, 90])
def test_a_period_must_be_one_cloudwatch_allows(period: int) -> None:
    _, client = store()
    with pytest.raises(ClientError) as raised:
        read(client, ["Sum"], period=period)
    assert raised.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "Period" in raised.value.response["Error"]["Message"]


def test_high_resolution_data_is_read_by_the_second_for_three_hours_only() -> None:
    # Two values 5 s apart, written at high resolution; read by 5-second periods.
    def written(now: float) -> Any:
        _, client = store(now)
        put(client, [1.0], at=START + 2, resolution=1)
        put(client, [3.0], at=START + 7, resolution=1)
        return client

    recent = read(written(START + 3600), ["Sum"], period=5)
    assert recent == {"Sum": [1.0, 3.0]}
    old = read(written(START + 4 * 3600), ["Sum"], period=5)
    assert old == {"Sum": []}  # kept only by the minute after 3 hours
    assert read(written(START + 4 * 3600), ["Sum"], period=60) == {"Sum": [4.0]}


def test_regular_data_is_kept_by_the_minute_and_coarser_with_age() -> None:
    _, client = store(START + 20 * 86_400)  # 20 days later: 5-minute periods only
    put(client, [2.0], at=START + 10)
    assert read(client, ["Sum"], period=60, end=START + 300) == {"Sum": []}
    assert read(client, ["Sum"], period=300, end=START + 300) == {"Sum": [2.0]}


def test_an_emf_line_becomes_the_metric_data_cloudwatch_logs_extracts() -> None:
    line = json.dumps(
        {
            "_aws": {
                "Timestamp": START * 1000,
                "CloudWatchMetrics": [
                    {
                        "Namespace": telemetry.METRIC_NAMESPACE,
                        "Dimensions": [["Room"]],
                        "Metrics": [
                            {"Name": "Admitted", "Unit": "Count"},
                            {"Name": "Wait", "Unit": "Seconds", "StorageResolution": 1},
                        ],
                    }
                ],
            },
            "Room": "spring-sale",
            "Admitted": 3,
            "Wait": [1, 2.5, 4],
            "requestId": "ignored: not a metric",
        }
    )
    ((namespace, data),) = metric_data_from_emf(line)
    assert namespace == "Beekeeper"
    room = [{"Name": "Room", "Value": "spring-sale"}]
    assert data == [
        {"MetricName": "Admitted", "Dimensions": room, "Timestamp": START, "Unit": "Count",
         "StorageResolution": 60, "Value": 3.0},
        {"MetricName": "Wait", "Dimensions": room, "Timestamp": START, "Unit": "Seconds",
         "StorageResolution": 1, "Values": [1.0, 2.5, 4.0]},
    ]  # fmt: skip
