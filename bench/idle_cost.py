"""Benchmark: what a room nobody is visiting costs per day, from the real trigger in simulation.

    .venv/bin/python bench/idle_cost.py [--rate 300000] [--hours 1]

Runs the real producer, trigger and consumer code in the simulator for some hours with nobody
arriving, counts every Lambda invocation and every AWS request they make (DynamoDB request
units per operation, SQS requests), and prices one day of it at the us-east-1 list prices
below. Lambda durations are not simulated: each invocation is charged a fixed overhead plus a
typical latency per AWS call, which overstates a warm function's time. The figures are an
estimate of the room's own compute and requests; CloudWatch's fixed charges (dashboard,
alarms, custom metrics) come on top and are listed in docs/stack.md.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

# us-east-1 list prices: bench/prices.py (shared with bench/visitor_cost.py).
from prices import (
    DYNAMODB_READ_UNIT,
    DYNAMODB_WRITE_UNIT,
    LAMBDA_ARM_GB_SECOND,
    LAMBDA_REQUEST,
    SQS_REQUEST,
)

from beekeeper.core.settings import RoomSettings
from beekeeper.room.assembly import Part
from beekeeper.room.wiring import RoomWiring
from beekeeper.simulator.run import Arrival, Crowd, Simulation, simulated_room

# The trigger's memory (stacks/functions.py) and the assumed time an invocation takes.
TRIGGER_MEMORY_GB = 0.25
INVOCATION_OVERHEAD_SECONDS = 0.02
SECONDS_PER_AWS_CALL = 0.01


class UnitCounter:
    """A fake client that also counts request units as DynamoDB bills them (items < 1 KB),
    while `counting[0]` is true (the trigger's runs)."""

    def __init__(self, target: Any, units: Counter[str], counting: list[bool]) -> None:
        self._target = target
        self._units = units
        self._counting = counting

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)
        if not self._counting[0]:
            return method

        def counted(**kwargs: Any) -> Any:
            self._units["calls"] += 1
            if name == "get_item":
                self._units["read"] += 1 if kwargs.get("ConsistentRead") else 0.5
            elif name == "batch_get_item":
                for request in kwargs["RequestItems"].values():
                    per_item = 1 if request.get("ConsistentRead") else 0.5
                    self._units["read"] += per_item * len(request["Keys"])
            elif name in ("put_item", "update_item", "delete_item"):
                self._units["write"] += 1  # a failed condition is billed too
            elif name == "batch_write_item":
                self._units["write"] += sum(len(r) for r in kwargs["RequestItems"].values())
            else:
                self._units["sqs"] += 1
            return method(**kwargs)

        return counted


class IdleRoom(Simulation):
    """The simulated room with its Lambda invocations counted, and its trigger's AWS calls
    and request units."""

    def __init__(self, settings: RoomSettings, crowd: Crowd) -> None:
        self.units: Counter[str] = Counter()
        self.invocations: Counter[str] = Counter()
        self.in_trigger = [False]
        super().__init__(settings, crowd)

    def _wired(self, part: Part) -> RoomWiring:
        wiring = super()._wired(part)
        wiring["dynamodb"] = UnitCounter(wiring["dynamodb"], self.units, self.in_trigger)
        wiring["sqs"] = UnitCounter(wiring["sqs"], self.units, self.in_trigger)
        return wiring

    def _trigger(self) -> None:
        self.invocations["trigger"] += 1
        before = self.units["calls"]
        self.in_trigger[0] = True
        try:
            super()._trigger()
        finally:
            self.in_trigger[0] = False
        self.invocations["trigger_calls"] += self.units["calls"] - before

    def _consume(self, payload: dict[str, Any]) -> None:
        self.invocations["consumer"] += 1
        super()._consume(payload)


def measure(rate: int, hours: int) -> dict[str, float]:
    room = IdleRoom(
        simulated_room(rate=rate, join_work=0),
        Crowd(visitors=0, arrival=Arrival.parse("burst"), minutes=hours * 60),
    )
    room.schedule()
    room.run()
    result = room.measure()
    units, invocations = room.units, room.invocations
    per_day = 24 / hours
    triggers = invocations["trigger"] * per_day
    seconds = (
        invocations["trigger"] * INVOCATION_OVERHEAD_SECONDS
        + invocations["trigger_calls"] * SECONDS_PER_AWS_CALL
    ) * per_day
    costs = {
        "lambda_time": seconds * TRIGGER_MEMORY_GB * LAMBDA_ARM_GB_SECOND,
        "lambda_requests": triggers * LAMBDA_REQUEST,
        "dynamodb": (units["write"] * DYNAMODB_WRITE_UNIT + units["read"] * DYNAMODB_READ_UNIT)
        * per_day,
        "sqs": units["sqs"] * per_day * SQS_REQUEST,
    }
    return {
        "trigger_invocations": triggers,
        "consumer_invocations": invocations["consumer"] * per_day,
        "peak_consumers": result.peak_consumers,
        "lambda_gb_seconds": seconds * TRIGGER_MEMORY_GB,
        "dynamodb_write_units": units["write"] * per_day,
        "dynamodb_read_units": units["read"] * per_day,
        "sqs_requests": units["sqs"] * per_day,
        **{f"usd_{k}": v for k, v in costs.items()},
        "usd_total": sum(costs.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=300_000)
    parser.add_argument("--hours", type=int, default=1, help="simulated, scaled to a day")
    args = parser.parse_args()
    figures = measure(args.rate, args.hours)
    print(f"a room deployed for {args.rate:,}/min with nobody arriving, per day:")
    print(
        f"  Lambda: {figures['trigger_invocations']:,.0f} trigger runs, "
        f"{figures['consumer_invocations']:,.0f} consumer runs (peak {figures['peak_consumers']}), "
        f"{figures['lambda_gb_seconds']:,.1f} GB-s"
    )
    print(
        f"  DynamoDB: {figures['dynamodb_write_units']:,.0f} write units, "
        f"{figures['dynamodb_read_units']:,.0f} read units; "
        f"SQS: {figures['sqs_requests']:,.0f} requests"
    )
    print(
        f"  cost: Lambda time ${figures['usd_lambda_time']:.4f} + Lambda requests "
        f"${figures['usd_lambda_requests']:.4f} + DynamoDB ${figures['usd_dynamodb']:.4f} + "
        f"SQS ${figures['usd_sqs']:.4f} = ${figures['usd_total']:.4f} a day"
    )


if __name__ == "__main__":
    main()
