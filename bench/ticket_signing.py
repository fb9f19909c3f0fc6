"""What signing a ticket costs each admission, against the 5,000 admissions/s goal.

Run: .venv/bin/python bench/ticket_signing.py [--admissions 20000]

Measures, on this machine's CPU (process time, so other processes do not count):
- one ticket: claims, JSON, base64url and the ES256 signature (room/tickets.py);
- the consumer's write of a batch of 10 admitted visitors (Consumer._write, the real code) with
  a table double that accepts everything, without and with tickets: what a ticket adds to the
  consumer's own work per admission;
- the AWS calls tickets add: GetSecretValue reads while the consumer admits (counted);
- the `v#` item's size with a ticket, against DynamoDB's 1 KB write unit (two units a KB for
  the consumer's transactional write), also once /client
  has checked and redeemed it (each /client call writes the item: core/client_check.py);
- importing cryptography (a new container's one-off cost), in a fresh interpreter.

Then the goal: 5,000 admissions/s = 300,000 a minute, over ceil(300,000 / consumer_capacity)
consumers, each with the CPU share of its memory (Lambda gives 1 vCPU per 1,769 MB).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import time
from typing import Any

from beekeeper.core.datamodel import CHECKED_ATTRIBUTE, REDEEMED_ATTRIBUTE, Token
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import DEFAULT_CONSUMER_CAPACITY, RoomSettings
from beekeeper.room.consumer import Consumer
from beekeeper.room.tickets import (
    NO_TICKETS,
    KeyRing,
    TicketHook,
    TicketIssuer,
    generate_private_jwk,
)

GOAL_PER_SECOND = 5_000
BATCH = 10  # the consumer writes what one receive brought: at most 10 visitors
CONSUMER_MEMORY_MB = 512  # stacks/functions.py
MB_PER_VCPU = 1_769  # Lambda's CPU share: one vCPU at 1,769 MB
WRITE_UNIT_BYTES = 1_024

SETTINGS = RoomSettings(
    name="bench",
    display_name="Bench",
    region="eu-west-1",
    origin="https://shop.example.com/sale",
    rate=300_000,
)
ISSUER = "https://abcdefghij.execute-api.eu-west-1.amazonaws.com/bench"


class AcceptingTable:
    """A table double that takes every admission write and keeps the last item written."""

    def __init__(self) -> None:
        self.last_item: dict[str, Any] = {}
        self.transactional = False

    def transact_write_items(self, TransactItems: list[dict[str, Any]]) -> dict[str, Any]:
        self.last_item = TransactItems[-1]["Put"]["Item"]
        self.transactional = True
        return {}

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        (requests,) = RequestItems.values()
        self.last_item = requests[-1]["PutRequest"]["Item"]
        return {"UnprocessedItems": {}}


class CountedRing:
    def __init__(self, text: str) -> None:
        self.text = text
        self.reads = 0

    def __call__(self) -> str:
        self.reads += 1
        return self.text


def item_bytes(item: dict[str, dict[str, str]]) -> int:
    """DynamoDB's size of an item: names and values in UTF-8; a number about 1 byte per two
    digits plus one."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        ((kind, text),) = value.items()
        size += len(text.encode()) if kind == "S" else math.ceil(len(text) / 2) + 1
    return size


def tokens(count: int) -> list[Token]:
    return [Token(f"{i:022d}", i) for i in range(1, count + 1)]


def time_writes(
    hook: TicketHook, admissions: int, clock: list[float]
) -> tuple[float, AcceptingTable]:
    table = AcceptingTable()
    consumer = Consumer(
        settings=SETTINGS,
        table="bench",
        queue_url="",
        dynamodb=table,
        sqs=None,
        clock=lambda: clock[0],
        sleep=lambda _s: None,
        pauses=Pauses(sleep=lambda _s: None, random=random.Random(1).random),
        tickets=hook,
    )
    admitted = tokens(admissions)
    batches = [admitted[i : i + BATCH] for i in range(0, admissions, BATCH)]
    started = time.process_time()
    for batch in batches:
        clock[0] += 0.1  # 100 batches a simulated 10 s: the ring is re-read once a minute
        consumer._write([(t, []) for t in batch], deadline=float("inf"))
    return (time.process_time() - started) / admissions, table


def import_seconds() -> float:
    code = (
        "import time; t = time.perf_counter();"
        "from cryptography.hazmat.primitives.asymmetric import ec, utils;"
        "from cryptography.hazmat.primitives import hashes;"
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admissions", type=int, default=20_000)
    args = parser.parse_args(argv)
    now = time.time()
    ring = CountedRing(KeyRing(ISSUER, (generate_private_jwk(signs_from=int(now) - 1),)).dump())
    clock = [now]
    issuer = TicketIssuer(read_ring=ring, settings=SETTINGS, clock=lambda: clock[0])

    token = Token("S3cretVisitorId-abcdef", 1)
    issuer.ticket(token, int(now), int(now) + 3600)  # the first read and the signer's setup
    started = time.process_time()
    for _ in range(args.admissions):
        issuer.ticket(token, int(now), int(now) + 3600)
    sign = (time.process_time() - started) / args.admissions

    plain, plain_table = time_writes(NO_TICKETS, args.admissions, [now])
    reads_before = ring.reads
    ticketed, table = time_writes(issuer, args.admissions, clock)
    simulated_seconds = args.admissions / BATCH * 0.1
    item = table.last_item
    # What /client adds: the last check's and the redeem's epoch seconds.
    stamp = {"N": str(int(now))}
    redeemed = {**item, CHECKED_ATTRIBUTE: stamp, REDEEMED_ATTRIBUTE: stamp}

    consumers = math.ceil(GOAL_PER_SECOND * 60 / DEFAULT_CONSUMER_CAPACITY)
    per_consumer = GOAL_PER_SECOND / consumers
    vcpu = CONSUMER_MEMORY_MB / MB_PER_VCPU
    added = ticketed - plain
    result = {
        "sign_us": round(sign * 1e6, 1),
        "write_per_admission_us_without": round(plain * 1e6, 1),
        "write_per_admission_us_with": round(ticketed * 1e6, 1),
        "added_per_admission_us": round(added * 1e6, 1),
        "secret_reads": ring.reads - reads_before,
        "secret_reads_over_simulated_s": round(simulated_seconds),
        "item_bytes_without": item_bytes(plain_table.last_item),
        "item_bytes": item_bytes(item),
        "ticket_chars": len(item["ticket"]["S"]),
        # A transactional write costs two units per 1 KB (AWS, "Capacity management for
        # transactions": one to prepare, one to commit).
        "write_units_per_admission": math.ceil(item_bytes(item) / WRITE_UNIT_BYTES)
        * (2 if table.transactional else 1),
        "item_bytes_checked_and_redeemed": item_bytes(redeemed),
        "write_units_per_client_call": math.ceil(item_bytes(redeemed) / WRITE_UNIT_BYTES),
        "cryptography_import_ms": round(import_seconds() * 1000, 1),
        "goal_per_second": GOAL_PER_SECOND,
        "consumers_at_goal": consumers,
        "admissions_per_consumer_per_s": round(per_consumer, 1),
        "consumer_vcpu": round(vcpu, 3),
        # The share of one consumer's time its tickets take at the goal, on its CPU share.
        "consumer_time_on_tickets": round(per_consumer * added / vcpu, 4),
        "cpu_seconds_per_second_at_goal": round(GOAL_PER_SECOND * added, 3),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
