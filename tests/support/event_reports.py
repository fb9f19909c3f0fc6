"""An event report of a simulated event, read from the store's CloudWatch (what the browser
test, the screenshot and bench/report_build.py draw).

The simulator runs the real functions; their EMF lines go into the store's CloudWatch as
CloudWatch Logs would put them there, with the governor's decisions (its own record_check) and
API Gateway's request counts beside them; the report then reads them as it reads a deployed
room's, through the store's boto3-shaped clients.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from beekeeper.charts.event_data import EventReport
from beekeeper.cli.event_report import read_event
from beekeeper.cli.rooms import Deployment
from beekeeper.core import telemetry
from beekeeper.core.datamodel import table_definition
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.room.emf import MinuteMetrics
from beekeeper.room.governor import record_check
from beekeeper.room.governor_records import Decision, log_item
from beekeeper.simulator.run import (
    EPOCH,
    Arrival,
    Crowd,
    SimulationResult,
    simulate,
    simulated_room,
)
from beekeeper.store.client import StoreClient
from beekeeper.store.cloudwatch import CloudWatch
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.timing import RealTime

TABLE = "beekeeper-spring-sale"


class At:
    """The store's clock: a fixed moment (the report is made an hour after the event)."""

    def __init__(self, now: float) -> None:
        self._now = now
        self._real = RealTime()

    def now(self) -> float:
        return self._now

    def guard(self) -> Any:
        return self._real.guard()


@dataclass
class SimulatedRoom:
    settings: RoomSettings
    now: float = EPOCH + 3600
    cloudwatch: CloudWatch = field(init=False)
    dynamodb: Any = field(init=False)
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        timing = At(self.now)
        self.cloudwatch = CloudWatch(timing)
        table = DynamoDb(timing)
        table.create_table_as_defined(table_definition(TABLE))
        self.dynamodb = StoreClient(table)

    def run(self, room: RoomSettings, crowd: Crowd) -> SimulationResult:
        """A simulated event from EPOCH; its metric lines into the store's CloudWatch."""

        def sink(clock: Callable[[], float]) -> MinuteMetrics:
            return MinuteMetrics(self.settings.name, clock=clock, write=self.lines.append)

        result = simulate(room, crowd, metrics=sink)
        self.ingest(self.lines)
        return result

    def ingest(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.cloudwatch.ingest_emf(line)

    def governed(self, decisions: Sequence[Decision]) -> None:
        """The governor's decisions: its metric lines and its `governor-log` item."""
        lines: list[str] = []
        for d in decisions:
            metrics = MinuteMetrics(self.settings.name, clock=lambda at=d.at: at,
                                    write=lines.append)  # fmt: skip
            record_check(metrics, d)
            metrics.flush()
        self.ingest(lines)
        self.dynamodb.put_item(TableName=TABLE, Item=log_item(list(decisions)))

    def requests(self, per_minute: Sequence[int]) -> None:
        """API Gateway's own request count of the room's API, a value a minute from EPOCH."""
        StoreClient(self.cloudwatch).put_metric_data(
            Namespace=telemetry.API_GATEWAY_NAMESPACE,
            MetricData=[
                {
                    "MetricName": telemetry.API_GATEWAY_REQUESTS,
                    "Dimensions": [
                        {"Name": telemetry.API_NAME_DIMENSION, "Value": self.settings.stack_name}
                    ],
                    "Timestamp": EPOCH + 60 * minute,
                    "Value": float(n),
                    "Unit": "Count",
                }
                for minute, n in enumerate(per_minute)
            ],
        )

    def report(self, since: str | None = None, until: str | None = None) -> EventReport:
        deployment = Deployment(
            {"TableName": TABLE, "QueueUrl": "https://sqs.invalid/q", "DeadLetterQueueUrl": ""}
        )
        return read_event(
            settings=self.settings,
            deployment=deployment,
            cloudwatch=StoreClient(self.cloudwatch),
            dynamodb=self.dynamodb,
            clock=lambda: self.now,
            pauses=Pauses(sleep=lambda _seconds: None, random=random.Random(1).random),
            since=since,
            until=until,
        )


def decision(minute: int, kind: str, before: int, after: int, reason: str) -> Decision:
    return Decision(
        at=EPOCH + minute * 60 + 31.5, decision=kind, reason=reason, rate_before=before,
        rate_after=after, samples=60, errors=0, median_ms=240.0 if kind != "pass" else 120.0,
        p90_ms=610.0 if kind != "pass" else 180.0, mean_ms=260.0, slow_above_ms=190.0,
    )  # fmt: skip


def spring_sale() -> tuple[SimulatedRoom, SimulationResult]:
    """The documents' spring sale (docs/charts.md, bench/report_build.py): 12,000 visitors in six
    minutes at 1,000 a minute, a slow shop halving the rate once at 9:04 and the governor
    bringing it back."""
    settings = RoomSettings(
        name="spring-sale",
        display_name="Spring Sale",
        region="eu-west-1",
        origin="https://shop.example/sale",
        rate=1000,
        dynamic_rate_throttling=True,
    )
    room = SimulatedRoom(settings)
    result = room.run(
        simulated_room(rate=1000, join_work=0),
        Crowd(
            visitors=12_000,
            arrival=Arrival.parse("uniform:6"),
            minutes=16,
            seed=7,
            # The governor's decisions below, as the operator's rate changes the simulator
            # knows.
            rate_changes=tuple(
                (m * 60 + 31.5, r) for m, r in ((4, 500), (6, 625), (7, 719), (8, 790))
            ),
        ),
    )
    room.governed(
        [
            decision(3, "hold", 1000, 1000, "slow: median over the baseline's limit"),
            decision(4, "halve", 1000, 500, "slow 2 checks in a row"),
            decision(5, "pass", 500, 500, "healthy"),
            decision(6, "raise", 500, 625, "healthy: a quarter of the gap back"),
            decision(7, "raise", 625, 719, "healthy: a quarter of the gap back"),
            decision(8, "raise", 719, 790, "healthy: a quarter of the gap back"),
        ]
    )
    admitted = result.admitted_per_minute
    room.requests([30 * a + 4 * w for a, w in zip(admitted, result.backlog_per_minute,
                                                   strict=True)])  # fmt: skip
    return room, result
