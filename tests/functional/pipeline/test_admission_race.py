"""Two deliveries of one message handled at once: the visitor is admitted once, whatever the order.

A standard queue may deliver a message twice, and a consumer held past the visibility timeout
sees its message handed to another. Here consumer A receives a visitor's message and reads
their item (none yet); before A writes, consumer B receives a copy, reads (none yet), admits
the visitor with its own ticket, and the shop redeems that ticket. Then A writes. A's write is
conditional on the visitor having no item, so it is refused: the item keeps B's ticket (one
`jti`) and its `redeemed_at`, a second redeem is refused, A deletes its copy without using a
slot, and the admitted counter counts one. Run on moto (AWS's model) and on the room's own
store (local mode's and the simulator's), with real signed tickets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import jwt
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from beekeeper.core.client_check import check_request
from beekeeper.core.datamodel import (
    REDEEMED_ATTRIBUTE,
    TICKET_ATTRIBUTE,
    Token,
    table_definition,
    visitor_key,
)
from beekeeper.room.consumer import ConsumerReport, run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.room.tickets import KeyRing, TicketIssuer, generate_private_jwk
from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from tests.support.pipeline import FakeClock, LongPollsOnTheClock, room

TABLE = "beekeeper-race"
ISSUER = "https://abc123.execute-api.us-east-1.amazonaws.com/shop"
VISITOR = Token(f"{42:022d}", 42)


@dataclass
class Backend:
    dynamodb: Any
    sqs: Any
    queue_url: str

    def item(self) -> dict[str, Any]:
        item: dict[str, Any] = self.dynamodb.get_item(
            TableName=TABLE, Key={"pk": {"S": visitor_key(VISITOR.id)}}, ConsistentRead=True
        )["Item"]
        return item

    def waiting(self) -> int:
        response = self.sqs.receive_message(QueueUrl=self.queue_url, VisibilityTimeout=0)
        return len(response.get("Messages", []))


@pytest.fixture(params=["moto", "store"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "moto":
        with mock_aws():
            dynamodb = boto3.client("dynamodb", region_name="us-east-1")
            sqs = boto3.client("sqs", region_name="us-east-1")
            dynamodb.create_table(**table_definition(TABLE))
            url = sqs.create_queue(QueueName="race", Attributes={"VisibilityTimeout": "60"})
            yield Backend(dynamodb, sqs, url["QueueUrl"])
        return
    timing = RealTime()
    database, queues = DynamoDb(timing), Sqs(timing)
    database.create_table_as_defined(table_definition(TABLE))
    queue = queues.create_queue("race", "http://127.0.0.1/0/race", visibility_timeout=60)
    yield Backend(StoreClient(database), StoreClient(queues), queue.url)


class HeldBeforeItsWrite:
    """The table as consumer A calls it: A's first admission write waits while `meanwhile`
    runs (the other delivery's consumer, and the shop)."""

    def __init__(self, dynamodb: Any, meanwhile: Callable[[], None]) -> None:
        self._dynamodb = dynamodb
        self._meanwhile: Callable[[], None] | None = meanwhile

    def transact_write_items(self, **request: Any) -> Any:
        if self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        return self._dynamodb.transact_write_items(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dynamodb, name)


def consume(
    backend: Backend, clock: FakeClock, issuer: TicketIssuer, dynamodb: Any, seconds: float
) -> ConsumerReport:
    start, _ = minute_span(int(clock() // 60), 60)
    clock.now = max(clock.now, start)
    assignment = {"minute": int(clock() // 60), "index": 0, "consumers": 1, "rate": 60}
    return run_consumer(
        {**assignment, "start": start, "deadline": clock() + seconds},
        settings=room(),
        table=TABLE,
        queue_url=backend.queue_url,
        dynamodb=dynamodb,
        sqs=LongPollsOnTheClock(backend.sqs, clock, backend.queue_url),
        clock=clock,
        sleep=clock.sleep,
        pauses=clock.pauses(),
        tickets=issuer,
    )


def test_a_second_delivery_between_the_read_and_the_write_admits_nobody_twice(
    backend: Backend,
) -> None:
    clock = FakeClock()
    ring = KeyRing(ISSUER, (generate_private_jwk(signs_from=0),)).dump()
    issuer = TicketIssuer(read_ring=lambda: ring, settings=room(), clock=clock)
    seen: dict[str, Any] = {}

    def second_delivery_and_the_shop() -> None:
        # A has read the visitor's item (none) and is about to write; the copy goes to B.
        backend.sqs.send_message(QueueUrl=backend.queue_url, MessageBody=str(VISITOR))
        seen["b"] = consume(backend, clock, issuer, backend.dynamodb, seconds=3)
        seen["ticket"] = backend.item()[TICKET_ATTRIBUTE]["S"]
        backend.dynamodb.update_item(
            **check_request(TABLE, VISITOR.id, now=int(clock()), redeem=True)
        )
        seen["redeemed_at"] = backend.item()[REDEEMED_ATTRIBUTE]

    backend.sqs.send_message(QueueUrl=backend.queue_url, MessageBody=str(VISITOR))
    held = HeldBeforeItsWrite(backend.dynamodb, second_delivery_and_the_shop)
    a = consume(backend, clock, issuer, held, seconds=10)

    assert seen["b"].admitted == 1
    assert a.admitted == 0 and a.duplicates == 1  # A's write was refused, and used no slot
    assert issuer.signed == 2  # A signed a second ticket, which was never stored
    item = backend.item()
    assert item[TICKET_ATTRIBUTE]["S"] == seen["ticket"]  # one ticket, so one jti
    jti = jwt.decode(seen["ticket"], options={"verify_signature": False})["jti"]
    assert (
        jwt.decode(item[TICKET_ATTRIBUTE]["S"], options={"verify_signature": False})["jti"] == jti
    )
    assert item[REDEEMED_ATTRIBUTE] == seen["redeemed_at"]  # the redeem stands
    with pytest.raises(ClientError) as refused:
        backend.dynamodb.update_item(
            **check_request(TABLE, VISITOR.id, now=int(clock()), redeem=True)
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    # Both copies deleted; the admission counted once.
    assert backend.waiting() == 0
    counter = backend.dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "admitted"}})["Item"]
    assert counter["n"]["N"] == "1"
