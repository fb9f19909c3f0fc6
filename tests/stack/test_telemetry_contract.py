"""The metrics contract: what the Lambdas print on stdout is what the dashboard and alarms read.

The real producer, trigger, consumer and governor run against moto for simulated minutes,
writing Embedded Metric Format lines to stdout exactly as in Lambda (room/emf.py). The lines
are parsed as the EMF specification defines them, and every metric the synthesized dashboard
and alarms reference (namespace, name, dimensions) must be among them. Then the behind-schedule
alarm's expression, read from the template, is evaluated over minutes of real runs.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.core.datamodel import ADMITTED_COUNTER_KEY, Token
from beekeeper.core.join_work import WORK_PARAMETER, Challenge, solve
from beekeeper.core.settings import RoomSettings
from beekeeper.room.consumer import run_consumer
from beekeeper.room.emf import MinuteMetrics
from beekeeper.room.governor import BASELINE_CHECKS, run_governor
from beekeeper.room.governor import SAMPLES as GOVERNOR_SAMPLES
from beekeeper.room.governor_sampling import Sample
from beekeeper.room.producer import Producer
from beekeeper.room.push import state_push
from beekeeper.room.trigger import queue_backlog, run_trigger
from tests.support.metric_math import alarm_fires, evaluate
from tests.support.pipeline import Aws, FakeClock, LongPollsOnTheClock
from tests.support.pipeline import aws as aws
from tests.support.push_double import RecordingPublisher
from tests.support.stack_testkit import CHANGED_ROOM, FULL_ROOM, MetricReference, Synthesized

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

# The template's room, at a rate a simulated minute runs quickly.
# A place costs a little work here: the visitors solve it on the way, as the page would.
SETTINGS = FULL_ROOM.replace(rate=30, consumer_capacity=100, join_work=10)
MINUTE = 60


@dataclass(frozen=True)
class EmfLine:
    timestamp_ms: int
    namespace: str
    dimension_sets: tuple[tuple[str, ...], ...]
    dimensions: dict[str, str]
    values: dict[str, float]
    units: dict[str, str]
    arrays: dict[str, list[float]]  # a distribution's values (one per visitor)


def parse_emf(line: str) -> EmfLine:
    """One stdout line as the EMF specification reads it; anything else fails the test."""
    document = json.loads(line)
    metadata = document["_aws"]
    assert isinstance(metadata["Timestamp"], int)
    (directive,) = metadata["CloudWatchMetrics"]
    dimension_sets = tuple(tuple(names) for names in directive["Dimensions"])
    dimensions: dict[str, str] = {}
    for names in dimension_sets:
        assert len(names) <= 9
        for name in names:
            assert isinstance(document[name], str), name  # a dimension target is a string
            dimensions[name] = document[name]
    assert 0 < len(directive["Metrics"]) <= 100
    values: dict[str, float] = {}
    units: dict[str, str] = {}
    arrays: dict[str, list[float]] = {}
    for definition in directive["Metrics"]:
        value = document[definition["Name"]]
        if isinstance(value, list):  # a numeric array target: at most 100 members
            assert 0 < len(value) <= 100
            assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            arrays[definition["Name"]] = value
        else:
            assert isinstance(value, int | float) and not isinstance(value, bool)
            values[definition["Name"]] = value
        units[definition["Name"]] = definition["Unit"]
    return EmfLine(
        metadata["Timestamp"],
        directive["Namespace"],
        dimension_sets,
        dimensions,
        values,
        units,
        arrays,
    )


def emf_lines(stdout: str) -> list[EmfLine]:
    return [parse_emf(line) for line in stdout.splitlines() if line.strip()]


def emitted_references(lines: list[EmfLine]) -> set[tuple[str, str, tuple[tuple[str, str], ...]]]:
    found = set()
    for line in lines:
        for names in line.dimension_sets:
            pairs = tuple(sorted((name, line.dimensions[name]) for name in names))
            for metric in [*line.values, *line.arrays]:
                found.add((line.namespace, metric, pairs))
    return found


def key(reference: MetricReference) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    return (reference.namespace, reference.name, reference.dimensions)


class FaultyTable:
    """moto's DynamoDB client, with the faults a busy table and a bad moment bring: the first
    admission write is throttled, and one duplicate check fails outright."""

    def __init__(self, dynamodb: Any) -> None:
        self._dynamodb = dynamodb
        self.throttle_writes = 1
        self.break_reads = 1

    def transact_write_items(self, **request: Any) -> Any:
        actions = request["TransactItems"]
        keys = [a["Put"]["Item"]["pk"]["S"] for a in actions if "Put" in a]
        admits = any(pk.startswith("v#") for pk in keys)
        if admits and self.throttle_writes:
            self.throttle_writes -= 1
            raise ClientError(
                {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow"}},
                "TransactWriteItems",
            )
        return self._dynamodb.transact_write_items(**request)

    def batch_get_item(self, **request: Any) -> Any:
        tables = request["RequestItems"].values()
        consistent = any(table.get("ConsistentRead") for table in tables)
        visitors = any(k["pk"]["S"].startswith("v#") for t in tables for k in t["Keys"])
        if consistent and visitors and self.break_reads:  # the consumer's duplicate check
            self.break_reads -= 1
            raise RuntimeError("connection reset")
        return self._dynamodb.batch_get_item(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dynamodb, name)


@dataclass
class Room:
    """The room's functions as their handlers wire them, one container each, on one clock."""

    aws: Aws
    clock: FakeClock
    settings: RoomSettings = SETTINGS
    producer: Producer = field(init=False)
    started: list[dict[str, Any]] = field(default_factory=list)
    calls: Iterator[int] = field(default_factory=itertools.count)
    # The room's push channel: its first publish is refused, as a throttled channel would.
    channel: RecordingPublisher = field(default_factory=lambda: RecordingPublisher(refuse_first=1))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.producer = Producer(
            settings=self.settings,
            table=self.aws.table,
            queue_url=self.aws.queue_url,
            dynamodb=self.aws.dynamodb,
            sqs=self.aws.sqs,
            clock=self.clock,
            metrics=self.metrics(),
            gate=self.aws.gate(self.settings.name),
            pauses=self.clock.pauses(),
        )

    def metrics(self) -> MinuteMetrics:
        return MinuteMetrics(self.settings.name, clock=self.clock)  # prints to stdout, as in Lambda

    def visitor(self, cookie: str | None = None) -> dict[str, Any]:
        headers = {"Cookie": f"beekeeper_token={cookie}"} if cookie else {}
        event: dict[str, Any] = {"httpMethod": "GET", "path": "/beekeeper", "headers": headers}
        response = self.producer.handle(event)
        self.producer.metrics.flush_ended()  # what the handler does after every request
        location = response["headers"].get("Location", "")
        if location.startswith("work#"):  # a new place: the work first, then the link again
            challenge = Challenge.parse(location.removeprefix("work#"))
            assert challenge is not None
            event["queryStringParameters"] = {WORK_PARAMETER: str(solve(challenge))}
            response = self.producer.handle(event)
            self.producer.metrics.flush_ended()
        return response

    def trigger(self, invoke: Callable[[dict[str, Any]], None] | None = None) -> None:
        metrics = self.metrics()
        run_trigger(
            settings=self.settings,
            table=self.aws.table,
            queue_url=self.aws.queue_url,
            dynamodb=self.aws.dynamodb,
            sqs=self.aws.sqs,
            invoke_consumer=invoke or self.started.append,
            clock=self.clock,
            pauses=self.clock.pauses(),
            metrics=metrics,
            push=state_push(self.settings, self.channel, metrics=metrics),
        )
        metrics.flush()  # the handler's end of run

    def consumers(self, dynamodb: Any = None) -> None:
        while self.started:
            payload = self.started.pop(0)
            metrics = self.metrics()
            self.clock.now = max(self.clock.now, payload["start"])
            run_consumer(
                payload,
                settings=self.settings,
                table=self.aws.table,
                queue_url=self.aws.queue_url,
                dynamodb=dynamodb or self.aws.dynamodb,
                sqs=LongPollsOnTheClock(self.aws.sqs, self.clock),
                clock=self.clock,
                sleep=self.clock.sleep,
                pauses=self.clock.pauses(),
                metrics=metrics,
                push=state_push(self.settings, self.channel, metrics=metrics),
            )
            metrics.flush()

    def governor(self, ms: float, failed: int = 0) -> str:
        metrics = self.metrics()

        def fetch(url: str, timeout: float) -> Sample:
            with self.lock:
                n = next(self.calls) % GOVERNOR_SAMPLES
            return Sample(ok=n >= failed, ms=ms * (1 + 0.01 * (n % 7)), failure="HTTP 502")

        decision = run_governor(
            settings=self.settings.replace(rate=1000),
            table=self.aws.table,
            dynamodb=self.aws.dynamodb,
            fetch=fetch,
            clock=self.clock,
            sleep=self.clock.sleep,
            pauses=self.clock.pauses(),
            metrics=metrics,
            push=state_push(self.settings, self.channel, metrics=metrics, sleep=self.clock.sleep),
        )
        metrics.flush()
        return decision.decision

    def next_minute(self, second: float = 0.5) -> None:
        self.clock.now = (self.clock.now // MINUTE + 1) * MINUTE + second


def test_every_metric_the_dashboard_and_alarms_read_is_emitted(
    synthesized: Synthesized, aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = FakeClock(1_800_000_000.0 - 30)  # half a minute before a minute starts
    room = Room(aws, clock)
    # A visitor whose admission has expired comes back: a new place, counted as rejoined.
    expired = Token("E" * 22, 7)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": f"v#{expired.id}"}, "expires_at": {"N": str(int(clock() - 1))}},
    )
    tokens = []
    for cookie in [str(expired)] + [None] * 19:
        response = room.visitor(cookie)
        tokens.append(response["headers"]["Set-Cookie"].split(";")[0].split("=", 1)[1])
        clock.now += 1
    aws.send(tokens[0])  # a duplicate delivery of the first visitor's message
    room.next_minute()
    room.trigger()
    room.consumers(dynamodb=FaultyTable(aws.dynamodb))
    checks = [(100.0, 0)] * BASELINE_CHECKS + [(5000.0, 0), (100.0, GOVERNOR_SAMPLES), (100.0, 0)]
    decisions = []
    for ms, failed in checks:
        decisions.append(room.governor(ms, failed))
        room.next_minute()
    assert decisions[BASELINE_CHECKS:] == ["hold", "halve", "raise"]
    room.visitor()  # a request in a later minute writes the producer's held minute

    lines = emf_lines(capsys.readouterr().out)
    emitted = emitted_references(lines)
    referenced = synthesized.metric_references(telemetry.METRIC_NAMESPACE)
    assert referenced, "the dashboard and alarms read the room's metrics"
    missing = {key(reference) for reference in referenced} - emitted
    assert missing == set(), f"referenced but never emitted: {sorted(missing)}"

    totals: dict[str, float] = {}
    waits: list[float] = []
    for line in lines:
        assert line.namespace == telemetry.METRIC_NAMESPACE
        assert line.dimensions == {telemetry.ROOM_DIMENSION: "test-room"}
        assert line.timestamp_ms % (MINUTE * 1000) == 0  # filed under its minute
        for name in line.units:
            assert line.units[name] == next(m.unit for m in telemetry.METRICS if m.name == name)
        for name, value in line.values.items():
            totals[name] = totals.get(name, 0) + value
        waits += line.arrays.get(telemetry.WAIT.name, [])
        assert set(line.arrays) <= {telemetry.WAIT.name}
    # The figures are the room's, not just present. The 20 arrivals of the first minute are
    # one line, written by the first request of a later minute; that request's own count is
    # held until its minute has ended.
    producer_lines = [line for line in lines if "Arrivals" in line.values]
    assert [line.values["Arrivals"] for line in producer_lines] == [20]
    assert totals["Planned"] == totals["Backlog"] == 21  # 20 messages and one duplicate
    assert totals["Rate"] == totals["OperatorRate"] == SETTINGS.rate
    assert totals["Admitted"] == 20 and totals["Duplicates"] == 1
    # One wait per visitor admitted, never below zero (percentiles would be lost). Their size
    # is held by tests/functional/pipeline/test_wait_metric.py, whose queue shares the clock.
    assert len(waits) == 20 and min(waits) >= 0
    assert totals["Rejoined"] == 1
    assert totals["WriteRetries"] >= 1 and totals["AbandonedBatches"] == 1
    assert totals["GovernorHalved"] == totals["GovernorHeld"] == totals["GovernorRaised"] == 1
    # The checks' median and p90, the slow one's (5 s and a little more) among them.
    medians = [line.values["GovernorMedian"] for line in lines if "GovernorMedian" in line.values]
    p90s = [line.values["GovernorP90"] for line in lines if "GovernorP90" in line.values]
    assert 5000 <= max(medians) <= max(p90s) <= 5000 * 1.06
    assert min(medians) >= 100


def test_a_capacity_rooms_dashboard_reads_what_its_functions_emit(
    synthesized_changed: Synthesized, aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    # The capacity room of the changed template, without its scheduled start: a cap of 3.
    settings = CHANGED_ROOM.replace(starts_at="", rate=30, consumer_capacity=100, max_inside=3)
    clock = FakeClock(1_800_000_000.0 - 30)
    room = Room(aws, clock, settings)
    tokens = []
    for _ in range(5):
        response = room.visitor()
        tokens.append(response["headers"]["Set-Cookie"].split(";")[0].split("=", 1)[1])
        clock.now += 1
    # The second visitor leaves the line before their turn (the producer's POST /leave).
    left = room.producer.handle(
        {
            "resource": "/leave",
            "httpMethod": "POST",
            "headers": {},
            "queryStringParameters": {"token": tokens[1]},
        }
    )
    assert left["body"] == '{"left": true}'
    room.next_minute()
    room.trigger()
    room.consumers()
    room.next_minute()
    room.trigger()  # the shop is full as this minute begins
    room.visitor()  # writes the producer's minute

    lines = emf_lines(capsys.readouterr().out)
    referenced = synthesized_changed.metric_references(telemetry.METRIC_NAMESPACE)
    capacity_metrics = {m.name for m in telemetry.CAPACITY_METRICS}
    assert capacity_metrics <= {reference.name for reference in referenced}
    # (The rest of the dashboard is held by the test above, with a governor and a rejoin.)
    ours = {key(r) for r in referenced if r.name in capacity_metrics | {telemetry.WAIT.name}}
    missing = ours - emitted_references(lines)
    assert missing == set(), f"referenced but never emitted: {sorted(missing)}"
    by_minute: dict[int, dict[str, float]] = {}
    for line in lines:
        minute = by_minute.setdefault(line.timestamp_ms // 60_000, {})
        for name, value in line.values.items():
            minute[name] = minute.get(name, 0) + value
    minutes = sorted(by_minute)
    insides = [by_minute[m].get("Inside") for m in minutes if "Inside" in by_minute[m]]
    assert insides == [0, 3]  # empty as the first minute began, full as the second did
    assert {by_minute[m].get("MaxInside") for m in minutes} - {None} == {3}
    assert sum(by_minute[m].get("LeftLine", 0) for m in minutes) == 1
    assert sum(by_minute[m].get("Admitted", 0) for m in minutes) == 3
    counter = aws.item(ADMITTED_COUNTER_KEY)
    assert counter is not None and counter["skipped"] == {"N": "1"}


def _minutes(
    aws: Aws,
    clock: FakeClock,
    capsys: pytest.CaptureFixture[str],
    *,
    minutes: int,
    arrivals_per_minute: int,
    run_consumers: bool,
) -> tuple[list[int], dict[str, dict[int, float]]]:
    """Run the room for `minutes` and return the periods and the alarm's inputs per period:
    the room's own metrics from its EMF lines, the queue depth as SQS would report it."""
    room = Room(aws, clock)
    periods: list[int] = []
    depth: dict[int, float] = {}
    capsys.readouterr()
    ordinal = 0
    for _ in range(minutes):
        for _ in range(arrivals_per_minute):
            ordinal += 1
            aws.send(str(Token(f"{ordinal:022d}", ordinal)))
        room.next_minute()
        period = int(clock.now // MINUTE) * MINUTE
        periods.append(period)
        depth[period] = queue_backlog(aws.sqs, aws.queue_url)
        room.trigger(invoke=None if run_consumers else (lambda payload: None))
        room.consumers()
    series: dict[str, dict[int, float]] = {"depth": depth}
    for line in emf_lines(capsys.readouterr().out):
        period = line.timestamp_ms // 1000
        for name, value in line.values.items():
            series.setdefault(name, {})
            series[name][period] = series[name].get(period, 0) + value
    return periods, series


def _behind_schedule(synthesized: Synthesized, periods: list[int], series: dict) -> bool:
    (alarm,) = [
        a["Properties"]
        for a in synthesized.resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["AlarmName"].endswith("-behind-schedule")
    ]
    queries = alarm["Metrics"]
    (expression,) = [q["Expression"] for q in queries if "Expression" in q]
    inputs = {
        q["Id"]: series.get(q["MetricStat"]["Metric"]["MetricName"], {})
        if q["MetricStat"]["Metric"]["Namespace"] == telemetry.METRIC_NAMESPACE
        else series["depth"]
        for q in queries
        if "MetricStat" in q
    }
    values = evaluate(expression, inputs, periods)
    return alarm_fires(
        values,
        periods,
        threshold=alarm["Threshold"],
        evaluation_periods=alarm["EvaluationPeriods"],
        datapoints_to_alarm=alarm["DatapointsToAlarm"],
    )


def test_behind_schedule_fires_for_a_room_that_admits_less_than_planned(
    synthesized: Synthesized, aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    # The trigger plans every minute, but its consumers never start (throttled, say).
    periods, series = _minutes(
        aws, FakeClock(), capsys, minutes=6, arrivals_per_minute=40, run_consumers=False
    )
    assert all(series["Planned"][p] == SETTINGS.rate for p in periods)
    assert "Admitted" not in series
    assert _behind_schedule(synthesized, periods, series) is True


def test_behind_schedule_stays_quiet_for_a_room_that_admits_its_plan(
    synthesized: Synthesized, aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    periods, series = _minutes(
        aws, FakeClock(), capsys, minutes=6, arrivals_per_minute=40, run_consumers=True
    )
    assert all(series["Admitted"][p] == series["Planned"][p] == SETTINGS.rate for p in periods)
    assert _behind_schedule(synthesized, periods, series) is False
