"""The EMF writer: one line per container and minute, in the format CloudWatch reads."""

from __future__ import annotations

import json
import logging

import pytest

from beekeeper.core import telemetry
from beekeeper.lambdas import log_context
from beekeeper.room.emf import DISCARD, MinuteMetrics

MINUTE = 60
START = 1_800_000_000.0  # a minute boundary


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def recorder(clock: Clock) -> tuple[MinuteMetrics, list[str]]:
    lines: list[str] = []
    return MinuteMetrics("spring-sale", clock=clock, write=lines.append), lines


def test_a_minute_of_requests_is_one_line() -> None:
    clock = Clock(START + 1)
    metrics, lines = recorder(clock)
    for _ in range(5000):
        metrics.count(telemetry.ARRIVALS)
        metrics.flush_ended()  # after every request, as the producer's handler does
        clock.now += 0.01
    assert lines == []  # the minute has not ended
    clock.now = START + MINUTE + 0.5
    metrics.flush_ended()
    (line,) = lines
    document = json.loads(line)
    assert document["Arrivals"] == 5000
    assert document["Room"] == "spring-sale"
    assert document["_aws"]["Timestamp"] == int(START * 1000)  # the minute it belongs to
    assert document["_aws"]["CloudWatchMetrics"] == [
        {
            "Namespace": "Beekeeper",
            "Dimensions": [["Room"]],
            "Metrics": [{"Name": "Arrivals", "Unit": "Count"}],
        }
    ]


def test_a_value_in_a_new_minute_writes_the_old_minute_first() -> None:
    clock = Clock(START + 59)
    metrics, lines = recorder(clock)
    metrics.count(telemetry.ADMITTED, 7)
    metrics.level(telemetry.RATE, 600)
    metrics.level(telemetry.RATE, 300)  # the last level of a minute stands
    clock.now = START + 61
    metrics.count(telemetry.ADMITTED, 2)
    (first,) = lines
    assert json.loads(first)["Admitted"] == 7 and json.loads(first)["Rate"] == 300
    metrics.flush()
    second = json.loads(lines[1])
    assert second["Admitted"] == 2 and "Rate" not in second
    assert second["_aws"]["Timestamp"] == int((START + MINUTE) * 1000)
    metrics.flush()
    assert len(lines) == 2  # nothing held, nothing written


def test_levels_keep_fractions_and_counts_stay_whole() -> None:
    metrics, lines = recorder(Clock(START))
    metrics.level(telemetry.RATE, 37.5)
    metrics.count(telemetry.DUPLICATES, 0)
    metrics.flush()
    document = json.loads(lines[0])
    assert document["Rate"] == 37.5 and document["Duplicates"] == 0
    assert isinstance(document["Duplicates"], int)


def test_discard_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # What a real sink writes (one EMF line on stdout, as Lambda hands it to CloudWatch)...
    real = MinuteMetrics("spring-sale", clock=Clock(START))
    real.count(telemetry.ARRIVALS)
    real.flush()
    assert json.loads(capsys.readouterr().out)["Arrivals"] == 1
    # ...Discard never writes, whatever it is given: code run outside Lambda emits no metrics.
    for _minute in range(3):
        DISCARD.count(telemetry.ARRIVALS, 5)
        DISCARD.level(telemetry.RATE, 5)
        DISCARD.flush_ended()
        DISCARD.flush()
    assert capsys.readouterr() == ("", "")


def test_log_records_of_the_rooms_code_carry_the_room() -> None:
    log_context.install("spring-sale")
    log_context.install("spring-sale")  # idempotent: not wrapped twice
    try:
        ours = logging.getLogger("beekeeper.trigger").makeRecord(
            "beekeeper.trigger", logging.INFO, __file__, 1, "minute %s", (5,), None
        )
        record = logging.getLogRecordFactory()(
            "beekeeper.consumer", logging.INFO, __file__, 1, "x", (), None
        )
        other = logging.getLogRecordFactory()("botocore", logging.INFO, __file__, 1, "x", (), None)
        assert record.room == "spring-sale"  # type: ignore[attr-defined]
        assert ours.room == "spring-sale"  # type: ignore[attr-defined]
        assert not hasattr(other, "room")
        assert ours.getMessage() == "minute 5"
    finally:
        log_context.uninstall()
    plain = logging.getLogRecordFactory()(
        "beekeeper.trigger", logging.INFO, __file__, 1, "x", (), None
    )
    assert not hasattr(plain, "room")


def test_a_distribution_is_written_in_arrays_of_at_most_100_values() -> None:
    metrics, lines = recorder(Clock(START + 5))
    metrics.count(telemetry.ADMITTED, 250)
    for n in range(250):
        metrics.sample(telemetry.WAIT, n / 4)
    metrics.sample(telemetry.WAIT, -0.2)  # another machine's clock a little ahead: no wait
    metrics.flush()
    documents = [json.loads(line) for line in lines]
    assert [len(d["Wait"]) for d in documents] == [100, 100, 51]
    # The minute's counts ride on its first line only; every line is filed under the minute.
    assert [d.get("Admitted") for d in documents] == [250, None, None]
    assert {d["_aws"]["Timestamp"] for d in documents} == {int(START * 1000)}
    values = [v for d in documents for v in d["Wait"]]
    assert values[:3] == [0, 0.25, 0.5] and values[-1] == 0
    for document in documents:
        (directive,) = document["_aws"]["CloudWatchMetrics"]
        assert {"Name": "Wait", "Unit": "Seconds"} in directive["Metrics"]
        assert {m["Name"] for m in directive["Metrics"]} == set(document) - {"_aws", "Room"}


def test_a_shortened_minute_is_written_as_a_high_resolution_metric() -> None:
    clock = Clock(START + 7)
    lines: list[str] = []
    metrics = MinuteMetrics("local", clock=clock, write=lines.append, minute_seconds=5)
    metrics.count(telemetry.ARRIVALS, 3)
    clock.now = START + 12  # the next 5-second minute
    metrics.count(telemetry.ARRIVALS, 2)
    metrics.flush()
    first, second = (json.loads(line) for line in lines)
    assert first["_aws"]["Timestamp"] == int((START + 5) * 1000)
    assert second["_aws"]["Timestamp"] == int((START + 10) * 1000)
    (directive,) = first["_aws"]["CloudWatchMetrics"]
    assert directive["Metrics"] == [{"Name": "Arrivals", "Unit": "Count", "StorageResolution": 1}]
