"""Capacity mode through the real trigger and consumer on moto: the cap holds, a freed place is
taken within seconds, visitors who left the line are passed over and counted."""

from __future__ import annotations

from typing import Any

from beekeeper.core.datamodel import ADMITTED_COUNTER_KEY, Token
from beekeeper.room.consumer import run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.room.places import read_inside
from beekeeper.room.room_state import write_config
from beekeeper.room.trigger import run_trigger
from tests.support.pipeline import (
    Aws,
    FakeClock,
    LongPollsOnTheClock,
    issued_token,
    producer,
    room,
)

CAPACITY = {"rate": 600, "max_inside": 3, "session_minutes": 5.0, "claim_minutes": 2.0}


def token(n: int) -> Token:
    return issued_token(n)


def payload(clock: FakeClock, rate: int) -> dict[str, Any]:
    start, deadline = minute_span(int(clock() // 60), 60)
    clock.now = max(clock.now, start)
    return {
        "minute": int(clock() // 60),
        "index": 0,
        "consumers": 1,
        "rate": rate,
        "start": start,
        "deadline": deadline,
    }


def consume(aws: Aws, clock: FakeClock, **settings: Any) -> Any:
    return run_consumer(
        payload(clock, settings["rate"]),
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=LongPollsOnTheClock(aws.sqs, clock, aws.queue_url),
        clock=clock,
        sleep=clock.sleep,
        pauses=clock.pauses(),
    )


def leave(aws: Aws, clock: FakeClock, tok: Token) -> str:
    """The shop's server to server POST /leave?token=, the producer's route."""
    event = {
        "resource": "/leave",
        "httpMethod": "POST",
        "headers": {},
        "queryStringParameters": {"token": str(tok)},
    }
    answered = producer(aws, clock, gate=aws.gate(), **CAPACITY).handle(event)
    return str(answered["body"])


def admitted_at(aws: Aws, count: int) -> dict[int, int]:
    found = {}
    for n in range(1, count + 1):
        item = aws.item(f"v#{token(n).id}")
        if item and "admitted_at" in item:
            found[n] = int(item["admitted_at"]["N"])
    return found


def test_the_shop_fills_to_the_cap_and_a_leave_lets_the_next_in(aws: Aws, clock: FakeClock) -> None:
    aws.send(*(str(token(n)) for n in range(1, 7)))
    start = clock.now
    left_at: list[float] = []

    def first_leaves() -> None:
        left_at.append(clock.now)
        assert leave(aws, clock, token(1)) == '{"left": true}'

    clock.at(start + 20, first_leaves)
    report = consume(aws, clock, **CAPACITY)
    admitted = admitted_at(aws, 6)
    assert sorted(admitted) == [1, 2, 3, 4]  # three at once, the fourth once a place freed
    assert report.admitted == 4
    assert max(admitted[n] for n in (1, 2, 3)) - start < 2  # straight in: the shop had room
    # (admitted_at is a whole second.) The warden's round and a look at the counter:
    assert 0 <= admitted[4] - int(left_at[0]) <= 3
    assert read_inside(aws.dynamodb, aws.table) == 3
    assert len(aws.queue_bodies()) == 2  # 5 and 6 still wait; nobody is lost


def test_a_visitor_who_left_the_line_is_passed_over_and_counted(aws: Aws, clock: FakeClock) -> None:
    aws.send(*(str(token(n)) for n in range(1, 6)))
    assert leave(aws, clock, token(2)) == '{"left": true}'
    report = consume(aws, clock, **CAPACITY)
    assert sorted(admitted_at(aws, 5)) == [1, 3, 4]
    assert report.skipped == 1
    counter = aws.item(ADMITTED_COUNTER_KEY)
    assert counter is not None and counter["skipped"] == {"N": "1"}
    assert counter["n"] == {"N": "3"}
    # The line moved past token 2: its message is gone, token 5 waits.
    assert aws.queue_bodies() == [str(token(5))]


def test_a_leaver_is_counted_once_however_often_their_message_comes(
    aws: Aws, clock: FakeClock
) -> None:
    aws.send(str(token(1)), str(token(2)), str(token(3)))
    assert leave(aws, clock, token(2)) == '{"left": true}'
    first = consume(aws, clock, **CAPACITY)
    # The leaver's message comes again (SQS delivers at least once) in a later minute.
    aws.send(str(token(2)))
    clock.now = (clock.now // 60 + 1) * 60  # the next minute
    again = consume(aws, clock, **CAPACITY)
    assert sorted(admitted_at(aws, 3)) == [1, 3]
    counter = aws.item(ADMITTED_COUNTER_KEY)
    assert counter is not None and counter["skipped"] == {"N": "1"}  # one place passed
    assert (first.skipped, again.skipped) == (1, 0)
    item = aws.item(f"v#{token(2).id}")
    assert item is not None and item["passed_over"] == {"BOOL": True}
    assert aws.queue_bodies() == []


def test_a_lowered_cap_is_followed_within_seconds(aws: Aws, clock: FakeClock) -> None:
    aws.send(*(str(token(n)) for n in range(1, 5)))
    settings = room(**CAPACITY)
    clock.at(
        clock.now + 1,
        lambda: write_config(aws.dynamodb, aws.table, settings, now=clock.now, max_inside=1),
    )
    consume(aws, clock, **{**CAPACITY, "rate": 2})  # one admission every 30 s
    # The first went in at once; the cap fell to one before the second slot.
    assert sorted(admitted_at(aws, 4)) == [1]


def test_the_trigger_plans_a_watcher_for_a_full_shop(aws: Aws, clock: FakeClock) -> None:
    settings = room(**CAPACITY)
    aws.send(*(str(token(n)) for n in range(1, 7)))
    consume(aws, clock, **CAPACITY)
    clock.now = (int(clock.now // 60) + 1) * 60
    invoked: list[dict[str, Any]] = []
    outcome = run_trigger(
        settings=settings,
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        invoke_consumer=invoked.append,
        clock=clock,
        pauses=clock.pauses(),
    )
    # Full, three waiting: one consumer watches for a place to free (the warden runs in it).
    assert outcome.consumers == 1 and len(invoked) == 1
    # The turnover: visitors let in per minute, the mean of the minutes on record in the last
    # TURNOVER_MINUTES; one minute is, in which the three went in.
    inside = aws.item("inside")
    assert inside is not None and int(inside["turnover"]["N"]) == 3
