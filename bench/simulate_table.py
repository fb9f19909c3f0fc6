"""Benchmark: the admission pipeline in the simulator, and the producer's AWS calls per visitor.

    .venv/bin/python bench/simulate_table.py [--quick]

Prints one row per (rate, faults): admitted per full minute, lost, admitted twice, the
busiest second against the mean, peak consumers, AWS calls per admitted visitor and the wait
from joining to admission; then how long a visitor waits in a quiet room; then how many AWS
calls the producer makes per new visitor against moto (in-process).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, simulate

RATES = (1, 7, 25, 600, 3300, 12345, 100_000, 270_000)
FAULT_SETS = ("", *FAULT_NAMES, ",".join(FAULT_NAMES))


def simulation_table(rates: tuple[int, ...], fault_sets: tuple[str, ...]) -> None:
    header = (
        f"{'rate/min':>9} {'visitors':>9} {'faults':<40} {'admitted/min':<22} "
        f"{'exact':>5} {'lost':>4} {'twice':>5} {'peak':>6} {'smooth':>6} {'cons':>4} "
        f"{'calls/adm':>9} {'wait med/max s':>15} {'secs':>5}"
    )
    print(header)
    print("-" * len(header))
    for rate in rates:
        for faults in fault_sets:
            visitors = rate + rate // 2 + 1
            started = time.perf_counter()
            r = simulate(
                rate=rate,
                visitors=visitors,
                arrival=Arrival.parse("burst"),
                minutes=2,
                faults=Faults.parse(faults),
                seed=rate,
            )
            elapsed = time.perf_counter() - started
            per_minute = "/".join(f"{n:,}" for n in r.admitted_per_minute)
            print(
                f"{rate:>9,} {visitors:>9,} {faults or 'none':<40} {per_minute:<22} "
                f"{'yes' if r.exact else 'NO':>5} {r.lost:>4} {r.admitted_twice:>5} "
                f"{r.peak_second_ratio:>6.2f} {'yes' if r.smooth else 'NO':>6} "
                f"{r.peak_consumers:>4} "
                f"{r.aws_calls_per_admitted or 0:>9.3f} "
                f"{f'{r.wait_seconds_median:.0f}/{r.wait_seconds_max:.0f}':>15} {elapsed:>5.1f}"
            )
            sys.stdout.flush()


def lone_visitors(rates: tuple[int, ...] = (1, 10, 60)) -> None:
    """How long a visitor waits in a quiet room: alone, and with arrivals spread over a minute."""
    print("\nquiet room: joined 1 s before a minute starts / half the rate joining over a minute")
    for rate in rates:
        alone = simulate(rate=rate, visitors=1, arrival=Arrival.parse("burst"), minutes=2, seed=3)
        spread = simulate(
            rate=rate,
            visitors=max(2, rate // 2),
            arrival=Arrival.parse("uniform:1"),
            minutes=3,
            seed=3,
        )
        print(
            f"{rate:>9,}/min: alone {alone.wait_seconds_max:.1f} s; {spread.visitors} spread: "
            f"median {spread.wait_seconds_median:.0f} s, longest {spread.wait_seconds_max:.0f} s"
        )


def producer_calls(visitors: int = 200) -> None:
    """AWS calls per new visitor, counted at botocore's before-call hook against moto."""
    import boto3
    from moto import mock_aws

    from beekeeper.core.settings import RoomSettings
    from beekeeper.lambdas.producer import Producer

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        calls: list[str] = []

        def count(model: Any, **_: Any) -> None:
            calls.append(model.name)

        for client in (dynamodb, sqs):
            client.meta.events.register("before-call.*.*", count)
        now = [1_800_000_000.0]
        producer = Producer(
            settings=RoomSettings(
                name="bench",
                display_name="Bench",
                region="us-east-1",
                origin="https://shop.example.com",
                rate=1000,
            ),
            table="t",
            queue_url=url,
            dynamodb=dynamodb,
            sqs=sqs,
            clock=lambda: now[0],
            rng=random.Random(1),
        )
        event = {
            "httpMethod": "GET",
            "path": "/beekeeper",
            "headers": {},
            "requestContext": {"path": "/prod/beekeeper"},
        }
        for _ in range(visitors):
            now[0] += 0.05  # 20 new visitors a second: the config is re-read every 5 s
            assert producer.handle(event)["statusCode"] == 302
    kinds = {name: calls.count(name) for name in sorted(set(calls))}
    print(
        f"\nproducer: {visitors} new visitors over {visitors * 0.05:.0f} s, {len(calls)} AWS calls "
        f"= {len(calls) / visitors:.3f} per visitor {kinds}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small rates, no fault combinations")
    args = parser.parse_args()
    if args.quick:
        simulation_table(RATES[:5], ("", ",".join(FAULT_NAMES)))
    else:
        simulation_table(RATES, FAULT_SETS)
    lone_visitors()
    producer_calls()


if __name__ == "__main__":
    main()
