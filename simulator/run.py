"""Run the real trigger and consumers for a few minutes of simulated time and measure them.

Visitors arrive on a schedule (a burst before the first minute, or evenly over some minutes);
the trigger runs at the start of every minute (twice with the double-trigger fault) and starts
the consumers it plans, each a simulated process, a fraction of a second later. What is
measured comes from the fakes' own logs, not from the code under test.
"""

from __future__ import annotations

import logging
import random
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas.consumer import RECEIVE_BATCH, run_consumer
from beekeeper.lambdas.trigger import run_trigger
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.fake_sqs import FakeQueue
from beekeeper.simulator.faults import Faults

# A realistic epoch (a whole minute) so epoch minutes and TTLs look like production's.
EPOCH = 1_800_000_000 - 1_800_000_000 % 60
TABLE = "beekeeper-sim"
QUEUE_URL = "https://sqs.simulated/queue"
SMOOTHNESS_FACTOR = 1.25


@dataclass(frozen=True)
class Arrival:
    """ "burst": everyone before the first minute; "uniform:K": evenly over K minutes."""

    kind: str
    minutes: int = 0

    @classmethod
    def parse(cls, text: str) -> Arrival:
        if text == "burst":
            return cls("burst")
        kind, _, minutes = text.partition(":")
        if kind == "uniform" and minutes.isdigit() and int(minutes) >= 1:
            return cls("uniform", int(minutes))
        raise ValueError(f"arrival {text!r}: use 'burst' or 'uniform:MINUTES' (e.g. uniform:5)")

    def times(self, visitors: int) -> list[float]:
        if self.kind == "burst":
            return [EPOCH - 1.0] * visitors
        span = self.minutes * 60
        return [EPOCH + span * i / visitors for i in range(visitors)]


@dataclass
class SimulationResult:
    rate: int
    visitors: int
    arrival: str
    minutes: int
    faults: list[str]
    seed: int
    admitted_per_minute: list[int]
    expected_per_minute: list[int]  # min(rate, backlog when the minute was claimed)
    backlog_per_minute: list[int]
    consumers_per_minute: list[int]
    lost: int
    admitted_twice: int
    peak_second_ratio: float
    smooth: bool  # every second within 1.25 x its minute's mean + one receive batch
    peak_consumers: int
    aws_calls: int
    aws_calls_per_admitted: float | None
    still_waiting: int
    dead_lettered: int
    duplicate_deliveries_skipped: int = 0
    # How often each fault actually struck (a fault switched on but never hit proves nothing).
    faults_injected: dict[str, int] = field(default_factory=dict)
    triggers_refused: int = 0  # duplicate trigger deliveries that found their minute claimed
    # From joining the line to the first admission write, over the visitors admitted.
    wait_seconds_median: float | None = None
    wait_seconds_max: float | None = None

    @property
    def exact(self) -> bool:
        return self.admitted_per_minute == self.expected_per_minute

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["exact"] = self.exact
        return data


def simulate(
    *,
    rate: int,
    visitors: int,
    arrival: Arrival,
    minutes: int,
    faults: Faults | None = None,
    seed: int = 1,
    consumer_capacity: int | None = None,
) -> SimulationResult:
    faults = faults or Faults()
    settings = RoomSettings(
        name="simulated",
        display_name="Simulated room",
        region="us-east-1",
        origin="https://shop.example.com",
        rate=rate,
    )
    if consumer_capacity:
        settings = settings.replace(consumer_capacity=consumer_capacity)
    rng = random.Random(seed)  # noqa: S311 - a reproducible simulation, not a secret
    scheduler = Scheduler(start=EPOCH - 2.0)
    queue = FakeQueue(
        scheduler,
        rng,
        faults,
        arrival.times(visitors),
        # Visitor i's token: a counter is as good as a CSPRNG here (ids only need to differ)
        # and keeps 270,000 visitors cheap. It matches the token pattern.
        lambda i: f"{i:022d}.{i + 1}",
    )
    table = FakeTable(scheduler, rng, faults)
    backlogs: dict[int, int] = {}
    quotas: dict[int, int] = {}
    consumers: dict[int, int] = {}
    skipped = [0]
    refused = [0]

    def start_consumer(payload: dict[str, Any]) -> None:
        def body() -> None:
            report = run_consumer(
                payload,
                settings=settings,
                table=TABLE,
                queue_url=QUEUE_URL,
                dynamodb=table,
                sqs=queue,
                clock=scheduler.clock,
                sleep=scheduler.sleep,
            )
            skipped[0] += report.duplicates

        scheduler.spawn(scheduler.now + rng.uniform(0.05, 0.5), body)

    def trigger() -> None:
        outcome = run_trigger(
            settings=settings,
            table=TABLE,
            queue_url=QUEUE_URL,
            dynamodb=table,
            sqs=queue,
            invoke_consumer=start_consumer,
            clock=scheduler.clock,
        )
        if not outcome.claimed:
            refused[0] += 1
        else:
            m = outcome.minute - EPOCH // 60
            backlogs[m] = outcome.backlog
            quotas[m] = sum(outcome.quotas)
            consumers[m] = len(outcome.quotas)

    for m in range(minutes):
        start = EPOCH + 60 * m
        scheduler.at(start + rng.uniform(0.0, 0.3), trigger)
        if faults.double_trigger:
            scheduler.at(start + rng.uniform(0.5, 20.0), trigger)
    end = EPOCH + 60 * minutes
    # The code under simulation logs every fault it survives: thousands of lines per minute.
    pipeline_log = logging.getLogger("beekeeper")
    level = pipeline_log.level
    pipeline_log.setLevel(logging.CRITICAL)
    try:
        scheduler.run_until(end)
    finally:
        scheduler.stop()
        pipeline_log.setLevel(level)
    return _measure(
        settings,
        visitors,
        arrival,
        minutes,
        faults,
        seed,
        queue,
        table,
        scheduler,
        backlogs,
        quotas,
        consumers,
        skipped[0],
        refused[0],
    )


def _measure(
    settings: RoomSettings,
    visitors: int,
    arrival: Arrival,
    minutes: int,
    faults: Faults,
    seed: int,
    queue: FakeQueue,
    table: FakeTable,
    scheduler: Scheduler,
    backlogs: dict[int, int],
    quotas: dict[int, int],
    consumers: dict[int, int],
    skipped: int,
    refused: int,
) -> SimulationResult:
    per_minute = [0] * minutes
    per_second: Counter[int] = Counter()
    first_write: dict[str, float] = {}
    for when, token_id in table.admissions:
        first_write.setdefault(token_id, when)
    for when in first_write.values():
        second = int(when - EPOCH)
        if 0 <= second < minutes * 60:
            per_minute[second // 60] += 1
            per_second[second] += 1
    peak_ratio = 0.0
    smooth = True
    for second, count in per_second.items():
        mean = per_minute[second // 60] / 60
        peak_ratio = max(peak_ratio, count / mean)
        if count > SMOOTHNESS_FACTOR * mean + RECEIVE_BATCH:
            smooth = False
    states = queue.states()
    admitted_ids = set(first_write)
    lost = sum(
        1
        for message, state in zip(queue.messages, states, strict=True)
        if state == "deleted" and message.body.partition(".")[0] not in admitted_ids
    )
    admitted_total = len(first_write)
    calls = queue.calls + table.calls
    joined = arrival.times(visitors)
    # Token ids are the visitor's index (see simulate): the wait is admission minus arrival.
    waits = sorted(when - joined[int(token_id)] for token_id, when in first_write.items())
    return SimulationResult(
        rate=settings.rate,
        visitors=visitors,
        arrival=arrival.kind if arrival.kind == "burst" else f"uniform:{arrival.minutes}",
        minutes=minutes,
        faults=faults.names,
        seed=seed,
        admitted_per_minute=per_minute,
        expected_per_minute=[min(settings.rate, backlogs.get(m, 0)) for m in range(minutes)],
        backlog_per_minute=[backlogs.get(m, 0) for m in range(minutes)],
        consumers_per_minute=[consumers.get(m, 0) for m in range(minutes)],
        lost=lost,
        admitted_twice=sum(1 for n in table.writes_per_id.values() if n > 1),
        peak_second_ratio=round(peak_ratio, 3),
        smooth=smooth,
        peak_consumers=scheduler.peak_alive,
        aws_calls=calls,
        aws_calls_per_admitted=round(calls / admitted_total, 3) if admitted_total else None,
        still_waiting=sum(
            1
            for message, state in zip(queue.messages, states, strict=True)
            if state in ("visible", "inflight")
            and message.body.partition(".")[0] not in admitted_ids
        ),
        dead_lettered=sum(1 for s in states if s == "dead"),
        duplicate_deliveries_skipped=skipped,
        faults_injected=dict(queue.injected + table.injected),
        triggers_refused=refused,
        wait_seconds_median=round(statistics.median(waits), 2) if waits else None,
        wait_seconds_max=round(waits[-1], 2) if waits else None,
    )
