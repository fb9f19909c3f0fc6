"""What rate mode's admission write costs, and how many visitors one consumer can admit a second.

    .venv/bin/python bench/admission_write.py [--seconds 20]

The consumer writes each receive batch (up to 10 visitors) in one call. Prints, from the real
consumer code (room/consumer.py) in the simulator (its table and queue on a simulated
clock):

1. the calls it made per admitted visitor, by name, over a backlogged minute at 6,000/min
   (one lane at the default consumer capacity), and the write request units those calls
   cost: a standard write of an item up to 1 KB is 1 unit, a transactional one 2 (AWS,
   "DynamoDB read and write operations" and "Capacity management for transactions");
2. one lane's ceiling: with an endless backlog and a rate no lane can reach, the visitors it
   admits per second when each call takes a modelled latency. AWS publishes no latencies;
   the table sweeps the admission write's, with the other calls held at the values given.

Runs whichever admission write the code makes; compare two versions of the code by running
this file against each.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from typing import Any

from beekeeper.core.datamodel import Token
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.room.consumer import Assignment, run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.fake_sqs import FakeQueue
from beekeeper.simulator.faults import Faults

TABLE = "bench"
QUEUE = "https://sqs.bench/q"
MINUTE = 30_000_000
ITEM_UNITS = 1  # the v# item with its ticket is 565 bytes: one 1 KB write unit
# Modelled latencies, seconds per call (the admission write's is swept).
OTHER_CALLS = {
    "receive_message": 0.010,
    "batch_get_item": 0.005,
    "delete_message_batch": 0.010,
    "update_item": 0.005,
}
WRITE_LATENCIES_MS = (0, 5, 10, 15, 20, 30)
ADMISSION_WRITES = ("transact_write_items", "batch_write_item")


class Timed:
    """A simulated client whose calls take modelled time and are counted by name."""

    def __init__(
        self, client: Any, scheduler: Scheduler, latency: dict[str, float], calls: Counter[str]
    ) -> None:
        self._client = client
        self._scheduler = scheduler
        self._latency = latency
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._client, name)

        def timed(**request: Any) -> Any:
            self._calls[name] += 1
            seconds = self._latency.get(name, 0.0)
            if seconds:
                self._scheduler.sleep(seconds)
            return call(**request)

        return timed


def run_lane(rate: int, seconds: float, latency: dict[str, float]) -> tuple[int, Counter[str]]:
    """One lane admitting from an endless backlog for `seconds`: (admitted, calls by name)."""
    start, _ = minute_span(MINUTE, 60)
    deadline = start + seconds
    scheduler = Scheduler(start=start - 0.5)
    rng = random.Random(1)
    queue = FakeQueue(scheduler, rng, Faults(), QUEUE)
    table = FakeTable(scheduler, rng, Faults(), TABLE)
    backlog = int(min(rate, 30_000) / 60 * seconds) + 100
    for ordinal in range(1, backlog):
        queue.send_message(QueueUrl=QUEUE, MessageBody=str(Token(f"{ordinal:022d}", ordinal)))
    settings = RoomSettings(
        name="bench",
        display_name="Bench",
        region="us-east-1",
        origin="https://shop.example",
        rate=rate,
    )
    calls: Counter[str] = Counter()
    reports = []
    assignment = Assignment(MINUTE, 0, 1, rate, start, deadline)
    scheduler.spawn(
        start - 0.1,
        lambda: reports.append(
            run_consumer(
                assignment.to_payload(),
                settings=settings,
                table=TABLE,
                queue_url=QUEUE,
                dynamodb=Timed(table, scheduler, latency, calls),
                sqs=Timed(queue, scheduler, latency, calls),
                clock=scheduler.clock,
                sleep=scheduler.sleep,
                pauses=Pauses(sleep=scheduler.sleep, random=random.Random(1).random),
            )
        ),
    )
    scheduler.run_until(deadline + 30)
    (report,) = reports
    return report.admitted, calls


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    admitted, calls = run_lane(6_000, args.seconds, {})
    write = next(name for name in ADMISSION_WRITES if calls[name])
    units = ITEM_UNITS * (2 if write == "transact_write_items" else 1)
    result: dict[str, Any] = {
        "admission_write": write,
        "admitted_at_6000_per_min": admitted,
        "calls_per_admission": {n: round(c / admitted, 3) for n, c in sorted(calls.items())},
        "write_units_per_admission": units,
        "other_calls_ms": {n: s * 1000 for n, s in OTHER_CALLS.items()},
        "lane_ceiling_per_second": {},
    }
    print(f"admission write: {write}, {units} write unit(s) per admission")
    print(f"calls per admission at 6,000/min: {result['calls_per_admission']}")
    print(f"\none lane, endless backlog, other calls {result['other_calls_ms']} ms:")
    print(f"{'write ms':>8} {'admitted/s':>10}")
    for write_ms in WRITE_LATENCIES_MS:
        latency = {**OTHER_CALLS, write: write_ms / 1000}
        count, _ = run_lane(300_000, args.seconds, latency)
        per_second = round(count / args.seconds, 1)
        result["lane_ceiling_per_second"][write_ms] = per_second
        print(f"{write_ms:>8} {per_second:>10}")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
