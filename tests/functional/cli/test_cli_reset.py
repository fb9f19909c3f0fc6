"""`beekeeper reset`: a deployed room (moto) emptied for its next event, settings and keys kept,
and a ticket issued before the reset no longer redeemed by /client."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from beekeeper.apigateway.room import Boto3DynamoDb, HttpRequest, run_integration
from beekeeper.cli.errors import AwsError
from beekeeper.cli.factory import CliFactory
from beekeeper.cli.room_reset import RoomReset
from beekeeper.cli.table import MAX_ROUNDS
from beekeeper.core.datamodel import ADMITTED_COUNTER_KEY, TICKET_KEYS_KEY
from beekeeper.core.retry import Pauses
from beekeeper.room.room_state import UNPROCESSED_BACKOFF
from tests.support.cli_testkit import (
    NOW,
    Clock,
    DeployedRoom,
    Invoke,
    aws_client,
    put_item,
    read_item,
    table_client,
)

MINUTE = int(NOW) // 60
TOKEN = "A" * 22


def populate(room: DeployedRoom, *, enabled: bool = False) -> None:
    """A room after its event: every kind of item of docs/data-model.md, and a line."""
    table = room.table
    put_item(table, {"pk": "config", "enabled": enabled, "operator_rate": 600, "rate": 150,
                     "version": 7, "closed": True, "message": "Sold out", "held": False,
                     "starts_at": int(NOW) - 3600, "max_inside": 0})  # fmt: skip
    put_item(table, {"pk": TICKET_KEYS_KEY, "published": '[{"kid": "k1"}]'})
    for shard, n in enumerate((10, 12, 9, 11)):
        put_item(table, {"pk": f"arrivals#{shard}", "n": n})
    put_item(table, {"pk": ADMITTED_COUNTER_KEY, "n": 40, "skipped": 0})
    put_item(table, {"pk": f"v#{TOKEN}", "ordinal": 1, "admitted_at": int(NOW) - 60,
                     "expires_at": int(NOW) + 3600, "ttl": int(NOW) + 90_000,
                     "ticket": "eyJ.x.y"})  # fmt: skip
    put_item(table, {"pk": "v#" + "B" * 22, "ordinal": 2, "admitted_at": int(NOW) - 50,
                     "expires_at": int(NOW) + 3600})  # fmt: skip
    put_item(table, {"pk": "p#" + "C" * 22, "ordinal": 3, "joined_at": int(NOW) - 7200})
    put_item(table, {"pk": "draw", "state": "drawn", "size": 1, "commitment": "abc"})
    put_item(table, {"pk": "draw#0", "tokens": "C" * 22 + ".3"})
    # The minute after: claimed by a trigger while the reset waits for the purge.
    for minute in (MINUTE - 61, MINUTE - 1, MINUTE, MINUTE + 1):
        put_item(table, {"pk": f"minute#{minute}", "admitted": 5, "arrivals_total": 42})
    for copy in range(10):
        put_item(table, {"pk": f"status#{copy}", "arrivals_total": 42, "admitted_total": 40})
    put_item(table, {"pk": "governor", "state": "throttled"})
    put_item(table, {"pk": "governor-log", "recent": []})
    put_item(table, {"pk": "deadlines#1700000000", "ids": ["x"]})
    put_item(table, {"pk": "warden", "done_through": 5})
    put_item(table, {"pk": "someone-elses-item", "n": 1})  # not the room's: left alone
    sqs = aws_client("sqs")
    for n in range(5):
        sqs.send_message(QueueUrl=room.outputs["QueueUrl"], MessageBody=f"{'D' * 22}.{n + 10}")
    sqs.receive_message(QueueUrl=room.outputs["QueueUrl"], MaxNumberOfMessages=1)  # in flight


def keys(room: DeployedRoom) -> set[str]:
    items = table_client().scan(TableName=room.table)["Items"]
    return {item["pk"]["S"] for item in items}


def queue_counts(room: DeployedRoom) -> tuple[int, int]:
    attributes = aws_client("sqs").get_queue_attributes(
        QueueUrl=room.outputs["QueueUrl"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def client_check(room: DeployedRoom, token: str, *, redeem: bool) -> dict[str, Any]:
    """/client as API Gateway answers it (the route's own template, on moto's table)."""
    query = {"token": token, **({"redeem": "1"} if redeem else {})}
    answer = run_integration(
        "client",
        HttpRequest("GET", "/client", query, {}),
        dynamodb=Boto3DynamoDb(table_client()),
        table_name=room.table,
        origin=room.settings.origin,
        request_time_ms=int(NOW * 1000),
    )
    body: dict[str, Any] = json.loads(answer.body)
    return body


def polling(room: DeployedRoom, token: str) -> dict[str, Any]:
    """/polling as API Gateway answers it, with the visitor's cookie."""
    answer = run_integration(
        "polling",
        HttpRequest("GET", "/polling", {}, {"Cookie": f"beekeeper_token={token}"}),
        dynamodb=Boto3DynamoDb(table_client()),
        table_name=room.table,
        origin=room.settings.origin,
        request_time_ms=int(NOW * 1000),
    )
    body: dict[str, Any] = json.loads(answer.body)
    return body


def test_a_reset_empties_the_event_and_keeps_the_room(
    deployed_room: DeployedRoom, invoke: Invoke, factory: CliFactory, clock: Clock
) -> None:
    populate(deployed_room)
    assert client_check(deployed_room, f"{TOKEN}.1", redeem=False)["allow"] is True
    seen_at_the_wait: list[tuple[float, tuple[int, int], set[str]]] = []

    def sleep(seconds: float) -> None:
        seen_at_the_wait.append((seconds, queue_counts(deployed_room), keys(deployed_room)))
        clock.now += seconds

    factory.sleep = sleep
    result = invoke("reset", "sale", input="y\n")
    assert result.exit_code == 0, result.output
    said = result.stderr
    assert "Room sale (eu-west-1) is off, closed. A reset empties it for the next event:" in said
    assert "the line: 2 waiting lose their place (5 messages in the queue)" in said
    assert "the admissions: 40 let in since the last reset; their tickets no longer redeem" in said
    assert "the pre-queue (1 drawn) and its draw" in said
    assert "Reset room sale now? [y/N]" in said
    # The queue is purged first; the table is emptied once SQS has had its 60 s.
    ((waited, counts, before),) = seen_at_the_wait
    assert waited == 60 and counts == (0, 0)
    assert f"v#{TOKEN}" in before
    assert keys(deployed_room) == {
        "config",
        TICKET_KEYS_KEY,
        # The claim of the minute under way when the table is emptied (after the 60 s) stays:
        # a late trigger delivery finds its minute taken.
        f"minute#{MINUTE + 1}",
        "someone-elses-item",
        *(f"status#{copy}" for copy in range(10)),
        # The arrival shards, levelled at the busiest one's 12, go on above every ordinal the
        # last event gave (at most 4 x 12); the admitted counter starts past them all.
        *(f"arrivals#{shard}" for shard in range(4)),
        ADMITTED_COUNTER_KEY,
    }
    assert [read_item(deployed_room.table, f"arrivals#{k}")["n"] for k in range(4)] == [12] * 4  # type: ignore[index]
    assert queue_counts(deployed_room) == (0, 0)
    config = read_item(deployed_room.table, "config")
    assert config is not None
    assert (config["closed"], config["held"], config["message"]) == (False, False, "")
    assert config["starts_at"] == 0  # the past start was the last event's
    assert (config["operator_rate"], config["rate"], config["enabled"]) == (600, 600, False)
    assert config["version"] == 8
    assert config["reset_ordinal"] == 48
    status = read_item(deployed_room.table, "status#3")
    assert status is not None
    # Nobody waits: the next visitor is number 1 (ordinal 49 with 48 places passed).
    assert (status["arrivals_total"], status["admitted_total"]) == (48, 48)
    # A visitor of the last event who asks /polling is told their place is gone.
    assert polling(deployed_room, f"{'D' * 22}.12") == {"allow": False, "state": "reset"}
    assert read_item(deployed_room.table, TICKET_KEYS_KEY) == {
        "pk": TICKET_KEYS_KEY,
        "published": '[{"kid": "k1"}]',
    }
    # A ticket issued before the reset no longer redeems.
    refused = client_check(deployed_room, f"{TOKEN}.1", redeem=True)
    assert refused["allow"] is False
    assert result.stdout.startswith("Room sale is reset: the line purged, ")
    assert "Switch it on for the next event: beekeeper on sale" in result.stdout


def test_a_room_that_is_on_is_not_reset_without_force(
    deployed_room: DeployedRoom, invoke: Invoke
) -> None:
    populate(deployed_room, enabled=True)
    before = keys(deployed_room)
    result = invoke("reset", "sale", "--yes")
    assert result.exit_code == 1
    assert "Room sale is on: visitors are still coming. Switch it off first" in result.output
    assert keys(deployed_room) == before and queue_counts(deployed_room) == (4, 1)
    forced = invoke("reset", "sale", "--yes", "--force")
    assert forced.exit_code == 0, forced.output
    assert "Reset room sale now?" not in forced.output  # --yes: no question
    assert "It is on: new visitors join an empty line." in forced.stdout
    assert f"v#{TOKEN}" not in keys(deployed_room)


def test_declining_changes_nothing(deployed_room: DeployedRoom, invoke: Invoke) -> None:
    populate(deployed_room)
    before = keys(deployed_room)
    result = invoke("reset", "sale", input="\n")  # the default is No
    assert result.exit_code == 1
    assert keys(deployed_room) == before and queue_counts(deployed_room) == (4, 1)


def test_a_second_reset_within_a_minute_waits_for_the_first_purge(
    deployed_room: DeployedRoom, invoke: Invoke
) -> None:
    populate(deployed_room)
    assert invoke("reset", "sale", "--yes").exit_code == 0
    aws_client("sqs").send_message(QueueUrl=deployed_room.outputs["QueueUrl"], MessageBody="x.1")
    again = invoke("reset", "sale", "--yes")  # moto refuses a second purge within 60 s
    assert again.exit_code == 0, again.output
    assert "the line purged (a purge was already under way)" in again.stdout


def test_a_table_that_keeps_refusing_the_deletes_ends_the_reset_in_a_sentence(
    deployed_room: DeployedRoom,
) -> None:
    populate(deployed_room)
    dynamodb = aws_client("dynamodb")
    calls: list[str] = []  # the deletes' writes, and the pauses between them, in order
    paused: list[float] = []

    def nothing_processed(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        # DynamoDB under throttling: every delete of the batch comes back unprocessed.
        calls.append("write")
        return AWSResponse("https://dynamodb", 200, {}, None), {
            "UnprocessedItems": json.loads(params["body"])["RequestItems"],
            "ResponseMetadata": {"HTTPStatusCode": 200},
        }

    def pause(seconds: float) -> None:
        calls.append("pause")
        paused.append(seconds)

    dynamodb.meta.events.register("before-call.dynamodb.BatchWriteItem", nothing_processed)
    reset = RoomReset(
        dynamodb=dynamodb,
        sqs=aws_client("sqs"),
        table=deployed_room.table,
        queue_url=deployed_room.outputs["QueueUrl"],
        dead_letter_queue_url=None,
        settings=deployed_room.settings,
        minute_seconds=60,
        clock=lambda: NOW,
        pauses=Pauses(sleep=pause, random=random.Random(5).random),
        purge_seconds=0,
    )
    try:
        with pytest.raises(AwsError, match="kept refusing the reset's deletes"):
            reset.run(lambda _said: None)
    finally:  # the clients of a test share their handlers
        dynamodb.meta.events.unregister("before-call.dynamodb.BatchWriteItem", nothing_processed)
    # An operator's command tries longer than a Lambda does, pausing before each retry.
    assert calls == ["write", "pause"] * (MAX_ROUNDS - 1) + ["write"]
    ceilings = [UNPROCESSED_BACKOFF.ceiling(n) for n in range(MAX_ROUNDS - 1)]
    assert all(0 < p <= c for p, c in zip(paused, ceilings, strict=True))
    assert f"v#{TOKEN}" in keys(deployed_room)  # nothing was deleted
