"""Trigger and consumer against moto: claims, plans, paced admissions, duplicates, failures."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from beekeeper.core.datamodel import Token
from beekeeper.core.retry import Pauses
from beekeeper.room.consumer import (
    FAILURE_BACKOFF,
    QUICK_RETRIES,
    STILL_CONFIG_SECONDS,
    THROTTLE_BACKOFF,
    Assignment,
    AssignmentError,
    run_consumer,
)
from beekeeper.room.pacing import minute_span
from beekeeper.room.room_state import write_config
from beekeeper.room.trigger import run_trigger
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
        pauses=clock.pauses(),
    )
    return outcome, invoked


def consume(
    aws: Aws,
    clock: FakeClock,
    payload: dict[str, Any],
    *,
    sqs: Any = None,
    joins: list[tuple[float, str]] = (),
    pauses: Pauses | None = None,
    **settings: Any,
) -> Any:
    return run_consumer(
        payload,
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=sqs or LongPollsOnTheClock(aws.sqs, clock, aws.queue_url, joins),
        clock=clock,
        sleep=clock.sleep,
        pauses=pauses or clock.pauses(),
    )


def add_arrivals(aws: Aws, count: int) -> None:
    aws.dynamodb.update_item(
        TableName=aws.table,
        Key={"pk": {"S": "arrivals#0"}},
        UpdateExpression="ADD n :c",
        ExpressionAttributeValues={":c": {"N": str(count)}},
    )


def test_trigger_plans_from_the_backlog_and_claims_each_minute_once(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(25))
    outcome, invoked = trigger(aws, clock, rate=150, consumer_capacity=100)
    assert outcome.claimed and outcome.backlog == 25 and outcome.consumers == 1
    start, deadline = minute_span(outcome.minute, 60)
    assert invoked == [
        {
            "minute": outcome.minute,
            "index": 0,
            "consumers": 1,
            "rate": 150,
            "start": start,
            "deadline": deadline,
            "minute_seconds": 60,
            "woken": False,
        }
    ]
    minute = aws.item(f"minute#{outcome.minute}")
    assert minute is not None and minute["consumers"]["N"] == "1" and minute["rate"]["N"] == "150"
    assert aws.item("status#3")["rate"]["N"] == "150"  # type: ignore[index]
    again, invoked_again = trigger(aws, clock, rate=150)
    assert not again.claimed and invoked_again == []


def test_visitors_who_arrived_during_the_last_minute_count_as_demand(
    aws: Aws, clock: FakeClock
) -> None:
    trigger(aws, clock, rate=1000, consumer_capacity=100)  # claims the first minute
    add_arrivals(aws, 150)  # they came and went straight in: the queue is empty again
    clock.now += 60
    outcome, invoked = trigger(aws, clock, rate=1000, consumer_capacity=100)
    assert outcome.backlog == 0 and outcome.demand == 150
    assert [p["consumers"] for p in invoked] == [2, 2]


def test_trigger_splits_the_rate_over_the_fewest_consumers(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(250))
    write_config(aws.dynamodb, aws.table, room(), now=clock(), operator_rate=230)
    outcome, invoked = trigger(aws, clock, consumer_capacity=100)
    assert [p["index"] for p in invoked] == [0, 1, 2]
    assert {(p["consumers"], p["rate"]) for p in invoked} == {(3, 230)}
    assert all(p["deadline"] < (outcome.minute + 1) * 60 for p in invoked)


def test_a_minute_nobody_is_waiting_for_starts_no_consumer(aws: Aws, clock: FakeClock) -> None:
    outcome, invoked = trigger(aws, clock)
    assert outcome.claimed and outcome.consumers == 0 and invoked == []
    assert not outcome.woken


class ArrivesDuringTheClaim:
    """DynamoDB as moto answers it, with a visitor joining just after the counters were read."""

    def __init__(self, aws: Aws) -> None:
        self._aws = aws
        self._reads = 0

    def batch_get_item(self, **request: Any) -> Any:
        response = self._aws.dynamodb.batch_get_item(**request)
        self._reads += 1
        if self._reads == 1:
            add_arrivals(self._aws, 1)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._aws.dynamodb, name)


def test_a_visitor_who_joins_while_the_minute_is_claimed_is_not_forgotten(
    aws: Aws, clock: FakeClock
) -> None:
    # They found the minute unclaimed, so they could not wake a consumer: the trigger does.
    invoked: list[dict[str, Any]] = []
    outcome = run_trigger(
        settings=room(),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=ArrivesDuringTheClaim(aws),
        sqs=aws.sqs,
        invoke_consumer=invoked.append,
        clock=clock,
        pauses=clock.pauses(),
    )
    assert outcome.consumers == 0 and outcome.woken
    assert len(invoked) == 1 and invoked[0]["woken"] and invoked[0]["consumers"] == 1


def test_while_the_room_is_off_the_trigger_starts_consumers_that_let_the_line_in(
    aws: Aws, clock: FakeClock
) -> None:
    """`off` lets the line in, each visitor with a ticket: the minute's consumers admit the
    whole line at once, not at the rate."""
    aws.send(*tokens(30))
    write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
    outcome, invoked = trigger(aws, clock, rate=5)
    assert outcome.claimed and len(invoked) == 1
    assert aws.item("status#0")["enabled"] == {"BOOL": False}  # type: ignore[index]
    start = clock()
    report = consume(aws, clock, payload(clock, 5), rate=5)
    assert report.admitted == 30  # six minutes of the rate
    assert max(admitted_times(aws, 30)) - start <= 1
    assert aws.queue_bodies() == []


def test_a_held_room_with_a_line_keeps_a_consumer_that_moves_the_line_at_a_resume(
    aws: Aws, clock: FakeClock
) -> None:
    """Held: nobody is admitted, but one consumer reads the config every second, so a resume
    lets the line move at once rather than at the next minute."""
    aws.send(*tokens(10))
    write_config(aws.dynamodb, aws.table, room(), now=clock(), held=True)
    outcome, invoked = trigger(aws, clock, rate=60)
    assert outcome.claimed and len(invoked) == 1
    resumed = clock() + 20.0
    clock.at(
        resumed, lambda: write_config(aws.dynamodb, aws.table, room(), now=resumed, held=False)
    )
    report = consume(aws, clock, payload(clock, 60), rate=60)
    assert report.admitted == 10
    assert min(admitted_times(aws, 10)) - resumed <= STILL_CONFIG_SECONDS + 1


def test_a_held_room_without_a_line_starts_no_consumer(aws: Aws, clock: FakeClock) -> None:
    write_config(aws.dynamodb, aws.table, room(), now=clock(), held=True)
    outcome, invoked = trigger(aws, clock)
    assert outcome.claimed and invoked == []


def payload(clock: FakeClock, rate: int, **extra: Any) -> dict[str, Any]:
    start, deadline = minute_span(int(clock() // 60), 60)
    clock.now = max(clock.now, start)
    return {
        "minute": int(clock() // 60),
        "index": 0,
        "consumers": 1,
        "rate": rate,
        "start": start,
        "deadline": deadline,
        **extra,
    }


def admitted_times(aws: Aws, count: int, start: int = 1) -> list[int]:
    items = [aws.item(f"v#{i:022d}") for i in range(start, start + count)]
    return [int(item["admitted_at"]["N"]) for item in items if item]


def test_a_backlog_is_admitted_at_exactly_the_rate_paced_over_the_minute(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(30))
    start = clock()
    report = consume(aws, clock, payload(clock, 25), rate=25)
    assert report.admitted == 25
    times = admitted_times(aws, 30)
    assert len(times) == 25
    item = aws.item(f"v#{1:022d}")
    assert item is not None
    assert int(item["expires_at"]["N"]) - int(item["admitted_at"]["N"]) == 3600
    assert int(item["ttl"]["N"]) == int(item["expires_at"]["N"]) + 86400
    assert aws.item("admitted")["n"]["N"] == "25"  # type: ignore[index]
    assert len(aws.queue_bodies()) == 5
    # Paced: the minute was used, not the first second.
    assert max(times) - start > 40


def test_visitors_who_join_mid_minute_go_straight_in(aws: Aws, clock: FakeClock) -> None:
    start = clock()
    joins = [(start + 12.5, tokens(1)[0]), (start + 40.2, tokens(1, start=2)[0])]
    report = consume(aws, clock, payload(clock, 10), joins=joins, rate=10)
    assert report.admitted == 2
    assert [t - start for t in admitted_times(aws, 2)] == [12, 40]  # the second they joined


def test_a_quiet_minute_keeps_one_batch_of_slots_not_the_whole_minute(
    aws: Aws, clock: FakeClock
) -> None:
    # 600/min, nobody for 30 s, then 40 visitors at once: 10 go in at once, the rest at the
    # rate's pace (10 a second), not all 300 slots of the quiet half minute in one go.
    start = clock()
    joins = [(start + 30, token) for token in tokens(40)]
    consume(aws, clock, payload(clock, 600), joins=joins, rate=600)
    times = [t - start for t in admitted_times(aws, 40)]
    assert times.count(30) <= 10 + 10
    assert max(times) >= 32


def test_duplicates_neither_admit_twice_nor_use_slots(aws: Aws, clock: FakeClock) -> None:
    first = tokens(3)
    aws.send(*first, first[0], first[1])  # two duplicate deliveries
    aws.send(*tokens(2, start=100))
    report = consume(aws, clock, payload(clock, 5), rate=5)
    assert report.admitted == 5
    assert report.duplicates == 2
    assert aws.queue_bodies() == []
    assert aws.item("admitted")["n"]["N"] == "5"  # type: ignore[index]


def test_already_admitted_visitor_is_deleted_without_a_slot(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(1))
    consume(aws, clock, payload(clock, 1), rate=1)
    clock.now = (int(clock() // 60) + 1) * 60
    aws.send(*tokens(1))  # the same message again, a minute later
    aws.send(*tokens(1, start=7))
    report = consume(aws, clock, payload(clock, 1), rate=1)
    assert report.admitted == 1 and report.duplicates == 1
    assert aws.item(f"v#{7:022d}") is not None


def test_malformed_messages_are_left_for_the_dead_letter_queue(
    aws: Aws, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    aws.send("not a token", *tokens(2))
    report = consume(aws, clock, payload(clock, 2), rate=2)
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
    report = consume(aws, clock, payload(clock, 60), sqs=aws.sqs)
    assert report.admitted == 3
    assert report.receives >= 5  # two empty, then one visitor per short receive


@pytest.mark.slow  # a whole paced minute of admissions against moto
def test_a_live_rate_change_is_followed_within_seconds(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(200))
    start = clock()

    class RaisesTheRate(LongPollsOnTheClock):
        def receive_message(self, **request: Any) -> dict[str, Any]:
            if clock() >= start + 20 and not changed:
                changed.append(clock())
                write_config(aws.dynamodb, aws.table, room(), now=clock(), operator_rate=240)
            return super().receive_message(**request)

    changed: list[float] = []
    report = consume(aws, clock, payload(clock, 60), sqs=RaisesTheRate(aws.sqs, clock))
    times = [t - start for t in admitted_times(aws, 200)]
    before = sum(1 for t in times if t < 20)
    after = sum(1 for t in times if t >= 26)
    assert 19 <= before <= 21  # 60/min
    assert after >= 4 * (58 - 26) - 10  # 240/min from the change on
    assert report.admitted == len(times)


def test_a_room_switched_off_mid_minute_admits_nobody_more(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(100))
    start = clock()

    class SwitchesOff(LongPollsOnTheClock):
        def receive_message(self, **request: Any) -> dict[str, Any]:
            if clock() >= start + 10 and not done:
                done.append(True)
                write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
            return super().receive_message(**request)

    done: list[bool] = []
    consume(aws, clock, payload(clock, 60), sqs=SwitchesOff(aws.sqs, clock))
    times = [t - start for t in admitted_times(aws, 100)]
    assert times and max(times) < 16  # seen at the next config read, within 5 s


def test_a_lone_throttle_is_retried_at_once(aws: Aws, clock: FakeClock) -> None:
    aws.send(*tokens(2))
    real = aws.dynamodb.transact_write_items
    answers = iter([True])

    def flaky(**kwargs: Any) -> Any:
        actions = kwargs["TransactItems"]
        if next(answers, False) and actions[0]["Put"]["Item"]["pk"]["S"].startswith("v#"):
            # A throttled transaction writes nothing; DynamoDB says so per action.
            raise ClientError(
                {
                    "Error": {"Code": "TransactionCanceledException", "Message": "throttled"},
                    "CancellationReasons": [{"Code": "ThrottlingError"} for _ in actions],
                },
                "TransactWriteItems",
            )
        return real(**kwargs)

    aws.dynamodb.transact_write_items = flaky
    paused: list[float] = []
    pauses = Pauses(sleep=paused.append, random=random.Random(1).random)
    report = consume(aws, clock, payload(clock, 600), rate=600, pauses=pauses)
    assert report.admitted == 2
    assert report.write_retries == 1
    assert paused == []  # no backoff for one
    assert aws.queue_bodies() == []


def test_a_table_that_stays_throttled_gets_time_and_loses_nobody(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(1))
    events: list[str] = []

    def throttled(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        # Every admission write is throttled; everything else is moto's.
        request = json.loads(params["body"])  # the serialised request botocore would send
        written = [a["Put"]["Item"]["pk"]["S"] for a in request["TransactItems"] if "Put" in a]
        if written and all(pk.startswith("v#") for pk in written):
            events.append("write")
        error = {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}
        return AWSResponse("https://dynamodb", 400, {}, None), {
            "Error": error,
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }

    paused: list[float] = []

    def pause(seconds: float) -> None:
        events.append("pause")
        paused.append(seconds)
        clock.sleep(seconds)

    pauses = Pauses(sleep=pause, random=random.Random(2).random)
    aws.dynamodb.meta.events.register("before-call.dynamodb.TransactWriteItems", throttled)
    try:
        report = consume(
            aws, clock, payload(clock, 6000, deadline=clock() + 10), rate=6000, pauses=pauses
        )
    finally:
        aws.dynamodb.meta.events.unregister("before-call.dynamodb.TransactWriteItems", throttled)
    assert report.admitted == 0
    # Two tries a batch at once; the visitor stays in flight and is written with the next
    # batch; once eight of the last ten batches were refused, each waits first: a pause drawn
    # below a ceiling that doubles per batch (full jitter), up to the cap.
    assert events[: events.index("pause")].count("write") >= 2 * 8
    assert len(paused) >= 10
    ceilings = [THROTTLE_BACKOFF.ceiling(n) for n in range(len(paused))]
    assert ceilings[:3] == [0.05, 0.1, 0.2] and ceilings[-1] == 1.0
    assert all(0 <= p <= c for p, c in zip(paused, ceilings, strict=True))
    assert paused[:3] != ceilings[:3]  # drawn, not fixed: lanes refused together part
    # Handed back only at the end of the span: received once, not once per refusal (every
    # receive counts towards the dead-letter queue).
    again = aws.sqs.receive_message(
        QueueUrl=aws.queue_url, AttributeNames=["ApproximateReceiveCount"], VisibilityTimeout=0
    )["Messages"]
    assert [m["Body"] for m in again] == tokens(1)
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"  # the consumer's and ours
    assert aws.item(f"v#{1:022d}") is None


def test_a_run_of_failed_batches_backs_off_after_a_few_quick_retries(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(*tokens(3))
    events: list[str] = []
    paused: list[float] = []

    class ConnectionLost(LongPollsOnTheClock):
        def receive_message(self, **request: Any) -> dict[str, Any]:
            events.append("receive")
            raise ConnectionError("connection lost")  # unexpected: not an AWS refusal

    def pause(seconds: float) -> None:
        events.append("pause")
        paused.append(seconds)
        clock.sleep(seconds)

    report = consume(
        aws,
        clock,
        payload(clock, 600, deadline=clock() + 5),
        sqs=ConnectionLost(aws.sqs, clock, aws.queue_url),
        pauses=Pauses(sleep=pause, random=random.Random(3).random),
        rate=600,
    )
    assert report.admitted == 0 and report.abandoned_batches == events.count("receive")
    # A lone failure is retried at once (waiting would forfeit slots); a run of them backs
    # off: a pause before every retry after the quick ones, drawn below a doubling ceiling.
    assert events[: QUICK_RETRIES + 2] == ["receive"] * (QUICK_RETRIES + 1) + ["pause"]
    assert events[QUICK_RETRIES:] == ["receive", "pause"] * len(paused)
    ceilings = [FAILURE_BACKOFF.ceiling(n) for n in range(len(paused))]
    assert len(paused) >= 8 and ceilings[:3] == [0.01, 0.02, 0.04] and ceilings[-1] == 1.0
    assert all(0 <= p <= c for p, c in zip(paused, ceilings, strict=True))
    assert sorted(aws.queue_bodies()) == sorted(tokens(3))  # nobody lost


def test_a_visitor_received_after_the_span_goes_to_the_next_minute(
    aws: Aws, clock: FakeClock
) -> None:
    _, deadline = minute_span(int(clock() // 60), 60)
    joins = [(deadline + 0.4, tokens(1)[0])]
    clock.now = deadline - 0.5  # the last long poll runs past the span's end
    report = consume(aws, clock, payload(clock, 60), joins=joins)
    assert report.admitted == 0
    # Hidden until the next minute's span starts, then visible again for its consumers.
    assert aws.queue_bodies() == []
    assert aws.item(f"v#{1:022d}") is None


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"minute": 1},
        {"minute": "x", "index": 0, "consumers": 1, "rate": 1, "start": 0, "deadline": 1},
        {"minute": 1, "index": 0, "consumers": 1, "rate": 0, "start": 0, "deadline": 1},
        {"minute": 1, "index": 2, "consumers": 2, "rate": 5, "start": 0, "deadline": 1},
        {"minute": 1, "index": 0, "consumers": 1, "rate": 5, "start": 2, "deadline": 1},
    ],
)
def test_a_bad_assignment_is_refused(bad: Any) -> None:
    with pytest.raises(AssignmentError):
        Assignment.from_payload(bad)
