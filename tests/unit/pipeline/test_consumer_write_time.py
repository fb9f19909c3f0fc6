"""A consumer keeps the rate when its writes take time (they do outside the simulator).

The simulator's calls take no simulated time; AWS's take milliseconds, local mode's a few
hundred microseconds. Slots that fall due while a batch is being written must stay in the
lane's bank: a lane that forfeited them admits less than the rate (5 ms per write call, three
calls a batch, 100 visitors a second: 1.5 slots of every 10).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from beekeeper.core.datamodel import Token
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.room.consumer import Assignment, run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.fake_sqs import FakeQueue
from beekeeper.simulator.faults import Faults

TABLE = "t"
QUEUE = "https://sqs.local/q"
MINUTE_SECONDS = 10.0
RATE = 1_000  # per 10-second minute: 100 a second, one lane's pace in AWS


class SlowWrites:
    """The table as a boto3 client whose writes take `seconds` of (simulated) time."""

    def __init__(self, table: FakeTable, scheduler: Scheduler, seconds: float) -> None:
        self._table = table
        self._scheduler = scheduler
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._table, name)
        if name not in ("transact_write_items", "update_item"):
            return call

        def slow(**request: Any) -> Any:
            self._scheduler.sleep(self._seconds)
            return call(**request)

        return slow


@pytest.mark.parametrize("write_seconds", [0.0, 0.002, 0.005])
def test_a_backlogged_lane_admits_every_slot_however_long_its_writes_take(
    write_seconds: float,
) -> None:
    minute = 180_000_000
    start, deadline = minute_span(minute, MINUTE_SECONDS)
    scheduler = Scheduler(start=start - 0.5)
    rng = random.Random(1)
    queue = FakeQueue(scheduler, rng, Faults(), QUEUE)
    table = FakeTable(scheduler, rng, Faults(), TABLE)
    for ordinal in range(1, 2 * RATE):
        queue.send_message(QueueUrl=QUEUE, MessageBody=str(Token(f"{ordinal:022d}", ordinal)))
    settings = RoomSettings(
        name="slow",
        display_name="Slow",
        region="us-east-1",
        origin="https://shop.example",
        rate=RATE,
    )
    assignment = Assignment(minute, 0, 1, RATE, start, deadline, minute_seconds=MINUTE_SECONDS)
    reports = []
    scheduler.spawn(
        start - 0.1,
        lambda: reports.append(
            run_consumer(
                assignment.to_payload(),
                settings=settings,
                table=TABLE,
                queue_url=QUEUE,
                dynamodb=SlowWrites(table, scheduler, write_seconds),
                sqs=queue,
                clock=scheduler.clock,
                sleep=scheduler.sleep,
                pauses=Pauses(sleep=scheduler.sleep, random=random.Random(1).random),
            )
        ),
    )
    scheduler.run_until(deadline + 30)
    (report,) = reports
    assert report.admitted == RATE
    assert report.forfeited == 0
