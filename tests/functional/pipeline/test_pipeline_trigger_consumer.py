"""Trigger and consumer against moto: claims, quotas, exact admissions, duplicates, failures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from beekeeper.core.datamodel import Token
from beekeeper.lambdas.consumer import Assignment, AssignmentError, run_consumer
from beekeeper.lambdas.room_state import write_config
from beekeeper.lambdas.trigger import run_trigger
from tests.support.pipeline import Aws, FakeClock, LongPollsOnTheClock, room


def tokens(count: int, start: int = 1) -> list[str]:
    return [str(Token(f"{i:022d}", i)) for i in range(start, start + count)]


def trigger(aws: Aws, clock: FakeClock, **settings: Any) -> tuple[Any, list[dict[str, Any]]]:
    invoked: list[dict[str, Any]] = []
    outcome = run_trigger(
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        invoke_consumer=invoked.append,
        clock=clock,
    )
    return outcome, invoked


def consume(
    aws: Aws, clock: FakeClock, payload: dict[str, Any], *, sqs: Any = None, **settings: Any
) -> Any:
    return run_consumer(
        payload,
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=sqs or LongPollsOnTheClock(aws.sqs, clock),
        clock=clock,
        sleep=clock.sleep,
    )


def test_trigger_plans_min_of_rate_and_backlog_once_per_minute(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(25))
    outcome, invoked = trigger(aws, clock, rate=150, consumer_capacity=100)
    assert outcome.claimed and outcome.backlog == 25
    assert [p["quota"] for p in invoked] == [25]
    minute = aws.item(f"minute#{outcome.minute}")
    assert minute is not None and minute["quota"]["N"] == "25" and minute["rate"]["N"] == "150"
    assert aws.item("status#3")["rate"]["N"] == "150"  # type: ignore[index]
    again, invoked_again = trigger(aws, clock, rate=150)
    assert not again.claimed and invoked_again == []


def test_trigger_splits_the_rate_over_the_fewest_consumers(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(250))
    write_config(aws.dynamodb, aws.table, room(), now=clock(), operator_rate=230)
    outcome, invoked = trigger(aws, clock, consumer_capacity=100)
    assert [p["quota"] for p in invoked] == [77, 77, 76]
    assert [p["index"] for p in invoked] == [0, 1, 2]
    assert all(p["deadline"] < (outcome.minute + 1) * 60 for p in invoked)


def test_trigger_admits_nobody_while_the_room_is_off(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(5))
    write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
    outcome, invoked = trigger(aws, clock)
    assert outcome.claimed and invoked == []
    assert aws.item("status#0")["enabled"] == {"BOOL": False}  # type: ignore[index]


def payload(clock: FakeClock, quota: int, **extra: Any) -> dict[str, Any]:
    return {
        "minute": int(clock() // 60),
        "index": 0,
        "quota": quota,
        "start": clock(),
        "deadline": clock() + 58,
        **extra,
    }


def test_consumer_admits_exactly_its_quota_paced_over_the_minute(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(30))
    start = clock()
    report = consume(aws, clock, payload(clock, 25))
    assert report.admitted == 25
    admitted = [aws.item(f"v#{i:022d}") for i in range(1, 31)]
    assert sum(item is not None for item in admitted) == 25
    item = next(i for i in admitted if i)
    assert int(item["expires_at"]["N"]) - int(item["admitted_at"]["N"]) == 3600
    assert int(item["ttl"]["N"]) == int(item["expires_at"]["N"]) + 86400
    assert aws.item("admitted")["n"]["N"] == "25"  # type: ignore[index]
    assert len(aws.queue_bodies()) == 5
    # Paced: the minute was used, not the first second.
    assert clock() - start > 40


def test_a_lone_visitor_is_admitted_at_once_not_at_the_end_of_the_minute(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(1))
    start = clock()
    report = consume(aws, clock, payload(clock, 1, index=1))
    assert report.admitted == 1
    item = aws.item(f"v#{1:022d}")
    assert item is not None and int(item["admitted_at"]["N"]) - start < 2


def test_near_the_deadline_an_empty_queue_is_not_asked_again_at_once(
    aws: Aws, clock: FakeClock
) -> None:
    # Less than a second left: receives can not long-poll, so the consumer pauses between
    # them instead of calling SQS in a tight loop until the deadline.
    queue = CountedReceives(LongPollsOnTheClock(aws.sqs, clock))
    report = consume(aws, clock, payload(clock, 5, index=1, deadline=clock() + 0.9), sqs=queue)
    assert report.admitted == 0
    assert 1 <= queue.receives <= 4


class CountedReceives:
    """Counts receives; past 20 it refuses them, so a consumer that spins ends (and fails)."""

    def __init__(self, sqs: LongPollsOnTheClock) -> None:
        self._sqs = sqs
        self.receives = 0

    def receive_message(self, **request: Any) -> dict[str, Any]:
        self.receives += 1
        if self.receives > 20:
            raise RuntimeError("the consumer is spinning on the queue")
        return self._sqs.receive_message(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sqs, name)


def test_duplicates_neither_admit_twice_nor_use_quota(aws: Aws, clock: FakeClock) -> None:
    first = tokens(3)
    aws.send(*first, first[0], first[1])  # two duplicate deliveries
    aws.send(*tokens(2, start=100))
    report = consume(aws, clock, payload(clock, 5))
    assert report.admitted == 5
    assert report.duplicates == 2
    assert aws.queue_bodies() == []
    assert aws.item("admitted")["n"]["N"] == "5"  # type: ignore[index]


def test_already_admitted_visitor_is_deleted_without_quota(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(1))
    consume(aws, clock, payload(clock, 1))
    aws.send(*tokens(1))  # the same message again, a minute later
    aws.send(*tokens(1, start=7))
    report = consume(aws, clock, payload(clock, 1))
    assert report.admitted == 1 and report.duplicates == 1
    assert aws.item(f"v#{7:022d}") is not None


def test_malformed_messages_are_left_for_the_dead_letter_queue(
    aws: Aws, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    aws.send("not a token", *tokens(2))
    report = consume(aws, clock, payload(clock, 2))
    assert report.admitted == 2 and report.malformed == 1
    assert any("malformed" in r.message for r in caplog.records)
    # Not deleted: in flight until its visibility timeout, then back for the DLQ's count.
    attributes = aws.sqs.get_queue_attributes(
        QueueUrl=aws.queue_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "1"


def test_an_empty_or_short_receive_does_not_end_the_minute_early(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(3))
    real = aws.sqs.receive_message
    answers = iter(["empty", "empty", "real"])

    def slow_queue(**kwargs: Any) -> Any:
        clock.now += 1  # long polling takes time
        if next(answers, "real") == "empty":
            return {}
        return real(**{**kwargs, "MaxNumberOfMessages": 1, "WaitTimeSeconds": 0})

    aws.sqs.receive_message = slow_queue
    # This queue takes its own time on the clock: no LongPollsOnTheClock around it.
    report = consume(aws, clock, payload(clock, 3, deadline=clock() + 20), sqs=aws.sqs)
    assert report.admitted == 3
    assert report.receives == 5  # two empty, then one visitor per short receive


def test_unprocessed_writes_are_retried_with_backoff(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(2))
    real = aws.dynamodb.batch_write_item
    answers = iter([True, True])

    def flaky(**kwargs: Any) -> Any:
        requests = kwargs["RequestItems"][aws.table]
        if next(answers, False) and requests[0]["PutRequest"]["Item"]["pk"]["S"].startswith("v#"):
            real(RequestItems={aws.table: requests[:1]})
            return {"UnprocessedItems": {aws.table: requests[1:]}}
        return real(**kwargs)

    aws.dynamodb.batch_write_item = flaky
    # Quota 4 in 3 s: batches of 2.
    aws.send(*tokens(2, start=3))
    report = consume(aws, clock, payload(clock, 4, deadline=clock() + 3))
    assert report.admitted == 4
    assert 0.05 in clock.slept  # backed off before retrying the leftover
    assert aws.queue_bodies() == []


def test_a_write_that_keeps_failing_leaves_the_visitor_in_the_queue(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(1))
    refused: list[float] = []

    def throttled(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        # Every BatchWriteItem is throttled (the status copies' too); everything else is moto's.
        request = json.loads(params["body"])  # the serialised request botocore would send
        written = [r["PutRequest"]["Item"]["pk"]["S"] for r in request["RequestItems"][aws.table]]
        if all(pk.startswith("v#") for pk in written):
            refused.append(clock())
        error = {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}
        return AWSResponse("https://dynamodb", 400, {}, None), {
            "Error": error,
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }

    aws.dynamodb.meta.events.register("before-call.dynamodb.BatchWriteItem", throttled)
    try:
        report = consume(aws, clock, payload(clock, 1, deadline=clock() + 2))
    finally:
        aws.dynamodb.meta.events.unregister("before-call.dynamodb.BatchWriteItem", throttled)
    assert report.admitted == 0
    assert len(refused) >= 6  # retried with backoff until the deadline came near
    assert refused[1] - refused[0] == pytest.approx(0.05)
    assert refused[2] - refused[1] == pytest.approx(0.1)
    assert aws.queue_bodies() == tokens(1)  # handed back, not lost
    assert aws.item(f"v#{1:022d}") is None


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"minute": 1},
        {"minute": "x", "index": 0, "quota": 1, "start": 0, "deadline": 1},
        {"minute": 1, "index": 0, "quota": -1, "start": 0, "deadline": 1},
    ],
)
def test_a_bad_assignment_is_refused(bad: Any) -> None:
    with pytest.raises(AssignmentError):
        Assignment.from_payload(bad)
