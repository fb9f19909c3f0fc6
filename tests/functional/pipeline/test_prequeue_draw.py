"""A scheduled event on moto: the producer's pre-queue places, the trigger's committed draw
(idempotent under a second run and a crashed drawer), the ranks, and the consumers' chunks
(claimed once, handed back with their progress, recovered from a lane that died)."""

from __future__ import annotations

import hashlib
from typing import Any

from beekeeper.core.datamodel import (
    DRAW_KEY,
    QUEUE_RETENTION_SECONDS,
    Token,
    draw_chunk_key,
    prequeue_key,
)
from beekeeper.core.schedule import CHUNK_SIZE, MAX_SECONDS_AHEAD, drawn_order, format_starts_at
from beekeeper.room.prequeue import STALE_CLAIM_MINUTES, Draw, PrequeueSource
from beekeeper.room.room_state import RoomConfig
from tests.support.pipeline import Aws, FakeClock, producer, room

START = 1_800_000_600  # ten minutes after the fake clock's start
GET = {"httpMethod": "GET", "headers": {}, "path": "/beekeeper", "requestContext": {}}


def config(starts_at: int = START) -> RoomConfig:
    return RoomConfig.defaults(room(starts_at=format_starts_at(starts_at)))


def join(aws: Aws, clock: FakeClock, visitors: int) -> list[Token]:
    link = producer(aws, clock, starts_at=format_starts_at(START))
    tokens = []
    for _ in range(visitors):
        response = link.handle(GET)
        assert response["statusCode"] == 302
        cookie = response["headers"]["Set-Cookie"]
        token = Token.parse(cookie.split(";")[0].split("=", 1)[1])
        assert token is not None
        tokens.append(token)
    return tokens


def secret_bytes(n: int) -> bytes:
    return bytes(range(n))


def draw(aws: Aws, clock: FakeClock) -> Draw:
    return Draw(aws.dynamodb, aws.table, clock, secret_bytes=secret_bytes, pauses=clock.pauses())


def chunk_ids(aws: Aws) -> list[str]:
    item = aws.item(DRAW_KEY) or {}
    ids: list[str] = []
    for c in range(int(item["chunks"]["N"])):
        chunk: Any = aws.item(draw_chunk_key(c))
        ids += [text.split(".")[0] for text in chunk["tokens"]["S"].split()]
    return ids


def test_before_the_start_visitors_get_a_place_in_the_pre_queue_not_the_queue(
    aws: Aws, clock: FakeClock
) -> None:
    tokens = join(aws, clock, 5)
    assert aws.queue_bodies() == []
    for token in tokens:
        place = aws.item(prequeue_key(token.id))
        assert place is not None and place["ordinal"]["N"] == str(token.ordinal)
    # Within the start's last seconds a place is also queued: the draw may not see it.
    clock.now = START - 1
    (late,) = join(aws, clock, 1)
    assert aws.item(prequeue_key(late.id)) is not None
    assert aws.queue_bodies() == [str(late)]


def test_a_place_for_a_start_a_year_ahead_lasts_past_it_cookie_and_item(
    aws: Aws, clock: FakeClock
) -> None:
    # The furthest start a room takes (core/schedule.py): the place must outlive it, and the
    # queue's retention after it, in the visitor's cookie and in the table alike.
    start = int(clock.now) + MAX_SECONDS_AHEAD
    link = producer(aws, clock, starts_at=format_starts_at(start))
    response = link.handle(GET)
    cookie = dict(
        part.strip().split("=", 1) for part in response["headers"]["Set-Cookie"].split(";")[1:]
        if "=" in part
    )  # fmt: skip
    token = Token.parse(response["headers"]["Set-Cookie"].split(";")[0].split("=", 1)[1])
    assert token is not None
    validity = 60 * 60
    # Until the start, a second in line at 60 a minute, the admission and half an hour's slack.
    assert int(cookie["Max-Age"]) == MAX_SECONDS_AHEAD + 1 + validity + 30 * 60
    # Within what browsers keep (400 days, RFC 6265bis).
    assert int(cookie["Max-Age"]) < 400 * 24 * 3600
    place: Any = aws.item(prequeue_key(token.id))
    assert int(place["ttl"]["N"]) >= start + QUEUE_RETENTION_SECONDS


def test_the_draw_commits_before_the_start_and_draws_at_it_in_the_secrets_order(
    aws: Aws, clock: FakeClock
) -> None:
    tokens = join(aws, clock, 3 * CHUNK_SIZE + 7)
    assert draw(aws, clock).run(config(), minute=0) == "committed"
    committed: Any = aws.item(DRAW_KEY)
    secret = committed["secret"]["S"]
    assert secret == secret_bytes(32).hex()
    assert committed["commitment"]["S"] == hashlib.sha256(secret.encode()).hexdigest()

    clock.now = START
    assert draw(aws, clock).run(config(), minute=1) == "drawn"
    expected = drawn_order(secret, [t.id for t in tokens])
    assert chunk_ids(aws) == expected
    assert expected != [t.id for t in tokens]  # not the arrival order
    for rank, token_id in enumerate(expected, start=1):
        place: Any = aws.item(prequeue_key(token_id))
        assert int(place["rank"]["N"]) == rank
    drawn: Any = aws.item(DRAW_KEY)
    assert drawn["size"]["N"] == str(len(tokens))
    assert drawn["ranked"]["N"] == drawn["chunks"]["N"] == "4"


def test_a_second_run_and_a_later_schedule_change_nothing(aws: Aws, clock: FakeClock) -> None:
    join(aws, clock, 30)
    clock.now = START
    draw(aws, clock).run(config(), minute=1)
    before = chunk_ids(aws)
    clock.now = START + 5
    join(aws, clock, 3)  # after the start: the queue, not the draw
    assert draw(aws, clock).run(config(START + 3600), minute=1) == "drawn"
    assert chunk_ids(aws) == before


def test_a_drawer_that_died_is_taken_over_after_its_lease(aws: Aws, clock: FakeClock) -> None:
    join(aws, clock, 10)
    draw(aws, clock).run(config(START + 10_000), minute=0)  # committed only
    clock.now = START
    aws.dynamodb.update_item(
        TableName=aws.table,
        Key={"pk": {"S": DRAW_KEY}},
        UpdateExpression="SET #s = :drawing, drawing_at = :at",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":drawing": {"S": "drawing"}, ":at": {"N": str(START)}},
    )
    # Another run while the lease holds leaves it alone...
    assert draw(aws, clock).run(config(), minute=1) == "drawing"
    # ...and takes over once it has run out.
    clock.now = START + 60
    assert draw(aws, clock).run(config(), minute=2) == "drawn"
    assert len(chunk_ids(aws)) == 10


def test_clearing_the_schedule_draws_the_pre_queue_at_once(aws: Aws, clock: FakeClock) -> None:
    join(aws, clock, 4)
    draw(aws, clock).run(config(), minute=0)
    assert draw(aws, clock).run(config(0), minute=0) == "drawn"


def drawn_room(aws: Aws, clock: FakeClock, visitors: int) -> list[str]:
    join(aws, clock, visitors)
    clock.now = START
    draw(aws, clock).run(config(), minute=1)
    return chunk_ids(aws)


def test_two_lanes_take_disjoint_chunks_in_drawn_order(aws: Aws, clock: FakeClock) -> None:
    order = drawn_room(aws, clock, 3 * CHUNK_SIZE)
    first = PrequeueSource(aws.dynamodb, aws.table, minute=1)
    second = PrequeueSource(aws.dynamodb, aws.table, minute=1)
    a = [t.id for t in first.take(CHUNK_SIZE)]
    b = [t.id for t in second.take(CHUNK_SIZE)]
    c = [t.id for t in first.take(CHUNK_SIZE)]
    assert a + b + c == order
    assert first.take(5) == [] and first.exhausted


def test_a_lane_whose_minute_ends_hands_its_chunk_back_with_its_progress(
    aws: Aws, clock: FakeClock
) -> None:
    order = drawn_room(aws, clock, 2 * CHUNK_SIZE)
    lane = PrequeueSource(aws.dynamodb, aws.table, minute=1)
    taken = lane.take(5)
    lane.settled([t.id for t in taken[:3]])  # two handed out, not written
    lane.release()
    nxt = PrequeueSource(aws.dynamodb, aws.table, minute=2)
    # The handed-back chunk comes first, from the first visitor not written.
    assert [t.id for t in nxt.take(CHUNK_SIZE)] == order[3:CHUNK_SIZE] + order[CHUNK_SIZE:23]


def test_a_chunk_of_a_lane_that_died_is_recovered_two_minutes_later(
    aws: Aws, clock: FakeClock
) -> None:
    order = drawn_room(aws, clock, CHUNK_SIZE)
    PrequeueSource(aws.dynamodb, aws.table, minute=1).take(4)  # the lane dies here
    assert PrequeueSource(aws.dynamodb, aws.table, minute=2).take(4) == []
    assert draw(aws, clock).recover_stale(1 + STALE_CLAIM_MINUTES - 1) == 0
    assert draw(aws, clock).recover_stale(1 + STALE_CLAIM_MINUTES) == 1
    again = PrequeueSource(aws.dynamodb, aws.table, minute=3)
    assert [t.id for t in again.take(CHUNK_SIZE)] == order


def test_a_done_chunk_moves_the_watermark_and_is_never_handed_back(
    aws: Aws, clock: FakeClock
) -> None:
    drawn_room(aws, clock, 2 * CHUNK_SIZE)
    lane = PrequeueSource(aws.dynamodb, aws.table, minute=1)
    taken = lane.take(CHUNK_SIZE + 1)  # the first chunk fully, one of the second
    lane.settled([t.id for t in taken])
    assert aws.item(draw_chunk_key(0))["done"]["BOOL"] is True  # type: ignore[index]
    assert draw(aws, clock).recover_stale(10) == 1  # only the second chunk
    assert (aws.item(DRAW_KEY) or {})["done_below"]["N"] == "1"


def test_a_pre_queue_page_is_told_its_turn_is_the_draws_and_a_returning_one_asks(
    aws: Aws, clock: FakeClock
) -> None:
    link = producer(aws, clock, starts_at=format_starts_at(START))
    first = link.handle(GET)
    # The ordinal is not the visitor's turn: the draw decides it (core/serving.py).
    assert first["headers"]["Location"] == "room#prequeue"
    cookie = first["headers"]["Set-Cookie"].split(";")[0]
    again = link.handle({**GET, "headers": {"Cookie": cookie}})
    assert again["headers"]["Location"] == "room#prequeue"
    draw(aws, clock).run(config(), START // 60 - 1)  # the commitment
    clock.now = START + 1
    assert draw(aws, clock).run(config(), START // 60) == "drawn"
    clock.now = START + 60  # the producer's cached config is read again
    back = link.handle({**GET, "headers": {"Cookie": cookie}})
    # Drawn: only /polling knows the rank, so the page is sent without a turn and asks.
    assert back["headers"]["Location"] == "room"
