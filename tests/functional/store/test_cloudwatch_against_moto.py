"""The store's CloudWatch answers GetMetricData as moto does, for the data a room writes.

The same EMF lines (what the functions print) are extracted by the store's `ingest_emf` (as
CloudWatch Logs does for a local room) and, through the same conversion, written to moto with
PutMetricData; then the same GetMetricData requests go to both through boto3 (botocore builds,
sends and parses both). Sum, SampleCount, Average, Minimum and Maximum must be equal. moto
computes no percentiles (its GetMetricData fails on them): tests/unit/test_store_cloudwatch.py
holds the store's to CloudWatch's definitions with known inputs.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from beekeeper.core import telemetry
from beekeeper.local.store_transport import StoreTransport
from beekeeper.room.emf import MinuteMetrics
from beekeeper.store.cloudwatch import CloudWatch, metric_data_from_emf
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol

START = 1_800_000_000 - 1_800_000_000 % 60  # a minute boundary
ROOM = "spring-sale"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Recent:
    """The store's time: a little after the data, so every resolution is still kept."""

    def now(self) -> float:
        return START + 600.0

    def guard(self) -> Any:
        raise AssertionError("CloudWatch takes no guard: it keeps its own lock")


def emf_lines() -> list[str]:
    """Three minutes of a room's metrics, from two containers, as the functions print them."""
    lines: list[str] = []
    clock = Clock(START + 1)
    producer = MinuteMetrics(ROOM, clock=clock, write=lines.append)
    consumer = MinuteMetrics(ROOM, clock=clock, write=lines.append)
    for minute in range(3):
        clock.now = START + 60 * minute + 5
        producer.count(telemetry.ARRIVALS, 100 + minute)
        producer.count(telemetry.ARRIVALS, 7)  # the same container, later in the minute
        consumer.count(telemetry.ADMITTED, 30 * (minute + 1))
        consumer.level(telemetry.RATE, 60 if minute < 2 else 30)
        for n in range(150):
            consumer.sample(telemetry.WAIT, (n * 7 + minute) % 90)
        producer.flush()
        consumer.flush()
    return lines


def query(name: str, stat: str, period: int = 60) -> dict[str, Any]:
    return {
        "Id": f"q{abs(hash((name, stat, period))) % 10**8}",
        "MetricStat": {
            "Metric": {
                "Namespace": telemetry.METRIC_NAMESPACE,
                "MetricName": name,
                "Dimensions": [{"Name": telemetry.ROOM_DIMENSION, "Value": ROOM}],
            },
            "Period": period,
            "Stat": stat,
        },
    }


QUERIES = [
    query("Arrivals", "Sum"),
    query("Arrivals", "SampleCount"),
    query("Admitted", "Sum", 180),
    query("Rate", "Maximum"),
    query("Rate", "Minimum", 120),
    query("Wait", "SampleCount"),
    query("Wait", "Average"),
    query("Wait", "Maximum", 180),
    query("Backlog", "Maximum"),  # never written: no data points
]


def answers(client: Any) -> list[tuple[str, list[Any], list[float]]]:
    response = client.get_metric_data(
        MetricDataQueries=QUERIES,
        StartTime=datetime.datetime.fromtimestamp(START, datetime.UTC),
        EndTime=datetime.datetime.fromtimestamp(START + 180, datetime.UTC),
        ScanBy="TimestampAscending",
    )
    return [
        (r["Id"], [t.timestamp() for t in r["Timestamps"]], [round(v, 6) for v in r["Values"]])
        for r in response["MetricDataResults"]
    ]


@pytest.fixture()
def moto_answers() -> Iterator[list[tuple[str, list[Any], list[float]]]]:
    with mock_aws():
        client = boto3.client("cloudwatch", region_name="us-east-1")
        for line in emf_lines():
            for namespace, data in metric_data_from_emf(line):
                client.put_metric_data(Namespace=namespace, MetricData=data)
        yield answers(client)


def test_the_store_reads_the_rooms_metrics_as_moto_does(
    moto_answers: list[tuple[str, list[Any], list[float]]],
) -> None:
    cloudwatch = CloudWatch(Recent())
    for line in emf_lines():
        cloudwatch.ingest_emf(line)
    timing = RealTime()
    protocol = JsonProtocol(DynamoDb(timing), Sqs(timing), cloudwatch=cloudwatch)
    client = StoreTransport(protocol, "http://127.0.0.1:1/local").client("cloudwatch")
    assert client.meta.service_model.resolved_protocol == "json"
    store_answers = answers(client)
    assert store_answers == moto_answers
    by_id = {i: (times, values) for i, times, values in store_answers}
    # The figures are the room's: two lines a minute from the producer add up.
    assert by_id[QUERIES[0]["Id"]][1] == [107.0, 108.0, 109.0]
    assert by_id[QUERIES[5]["Id"]][1] == [150.0, 150.0, 150.0]  # one wait per visitor
    assert by_id[QUERIES[-1]["Id"]] == ([], [])
