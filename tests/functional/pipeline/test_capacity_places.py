"""Capacity mode on moto: places taken with admissions, sessions renewed and ended through the
routes' real templates and the producer's /leave, and the warden freeing exactly the places
that are free."""

from __future__ import annotations

import json
from typing import Any

import pytest

from beekeeper.apigateway.room import HttpResponse
from beekeeper.core.datamodel import (
    INSIDE_KEY,
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEAVING_VALUE,
    Token,
    deadline_key,
    visitor_key,
)
from beekeeper.core.settings import RoomSettings
from beekeeper.room import places
from beekeeper.room.places import Warden, read_inside
from tests.support.pipeline import (
    Aws,
    FakeClock,
    admit_with_places,
    issued_token,
    producer,
    room,
    visitor_request,
)

ORIGIN = "https://shop.example.com/sale"


CAPACITY = {"max_inside": 3, "session_minutes": 5, "claim_minutes": 2}


def capacity_room(**changes: Any) -> RoomSettings:
    return room(**CAPACITY, **changes)


def settings_changes(settings: RoomSettings) -> dict[str, Any]:
    """The changes that make `settings` out of the tests' base room."""
    base = room().to_mapping()
    return {k: v for k, v in settings.to_mapping().items() if base[k] != v}


def token(n: int) -> Token:
    return issued_token(n)


def call(
    aws: Aws, clock: FakeClock, route: str, tok: Token | None, settings: RoomSettings
) -> HttpResponse:
    """A visitor's request to a capacity route: the templates', or the producer's /leave."""
    if route == "leave":
        event = {
            "resource": "/leave",
            "httpMethod": "POST",
            "headers": {},
            "queryStringParameters": {"token": str(tok)} if tok else None,
        }
        answered = producer(aws, clock, gate=aws.gate(), **settings_changes(settings)).handle(event)
        return HttpResponse(answered["statusCode"], answered["headers"], answered["body"])
    return visitor_request(aws, clock, route, tok, settings, origin=ORIGIN)


def answer(response: HttpResponse) -> Any:
    assert response.status == 200, (response.status, response.body)
    return json.loads(response.body)


def admit(
    aws: Aws, clock: FakeClock, settings: RoomSettings, *tokens: Token
) -> places.AdmitOutcome:
    return admit_with_places(aws, clock, settings, *tokens)


def rounds(aws: Aws, clock: FakeClock) -> places.WardenReport:
    """The warden's rounds until it has looked at every second gone by (a consumer runs one
    every second; a test that moves the clock by minutes runs several at once)."""
    total = places.WardenReport()
    while True:
        report = Warden(aws.dynamodb, aws.table, clock, pauses=clock.pauses()).run()
        for name in ("left", "ended", "no_shows", "renewed"):
            setattr(total, name, getattr(total, name) + getattr(report, name))
        progress = aws.item(places.WARDEN_KEY)
        if progress is not None and int(progress["done_through"]["N"]) >= int(clock.now) - 1:
            return total


def state(aws: Aws, tok: Token) -> str | None:
    item = aws.item(visitor_key(tok.id))
    return item["state"]["S"] if item else None


def test_admissions_stop_at_the_cap_all_or_none(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    assert admit(aws, clock, settings, token(1), token(2)).written == [token(1).id, token(2).id]
    full = admit(aws, clock, settings, token(3), token(4))
    assert full.full and full.written == []
    # Nothing of the refused batch was written: the transaction is all or none.
    assert aws.item(visitor_key(token(3).id)) is None
    assert read_inside(aws.dynamodb, aws.table) == 2
    assert admit(aws, clock, settings, token(3)).written == [token(3).id]
    assert read_inside(aws.dynamodb, aws.table) == 3
    deadline = int(clock.now) + settings.claim_seconds
    bucket = aws.item(deadline_key(deadline))
    assert bucket is not None and token(1).id in bucket["ids"]["SS"]


def test_a_visitor_who_left_the_line_is_never_admitted(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    assert answer(call(aws, clock, "leave", token(1), settings)) == {"left": True}
    outcome = admit(aws, clock, settings, token(1), token(2))
    assert outcome.taken == [token(1).id] and outcome.written == []
    assert read_inside(aws.dynamodb, aws.table) == 0  # the counter moved with nobody
    assert state(aws, token(1)) == "left"
    assert admit(aws, clock, settings, token(2)).written == [token(2).id]


def test_a_no_show_frees_the_place_at_the_claim_deadline(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1))
    clock.now += settings.claim_seconds - 1
    assert rounds(aws, clock).ended == 0
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": True}  # arrives
    clock.now += 2  # past the claim deadline: renewed, so it stands
    report = rounds(aws, clock)
    assert (report.ended, report.renewed) == (0, 1)
    assert state(aws, token(1)) == "inside"
    clock.now += settings.session_seconds  # idle for a whole session
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": False}
    report = rounds(aws, clock)
    assert (report.ended, report.no_shows) == (1, 0)
    assert state(aws, token(1)) == "ended"
    assert read_inside(aws.dynamodb, aws.table) == 0


def test_an_admitted_visitor_who_never_arrives_is_a_no_show(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1), token(2))
    clock.now += settings.claim_seconds + 1
    report = rounds(aws, clock)
    assert (report.ended, report.no_shows) == (2, 2)
    assert read_inside(aws.dynamodb, aws.table) == 0
    # A place freed once is never freed again, by another warden that looks again.
    aws.dynamodb.delete_item(TableName=aws.table, Key={"pk": {"S": places.WARDEN_KEY}})
    assert rounds(aws, clock).ended == 0
    assert read_inside(aws.dynamodb, aws.table) == 0


def test_a_session_renews_from_each_check(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1))
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": True}  # arrives
    for _ in range(5):  # active for five sessions' length, a check every session - 10 s
        clock.now += settings.session_seconds - 10
        assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": True}
        assert rounds(aws, clock).ended == 0
    item = aws.item(visitor_key(token(1).id))
    assert item is not None
    assert int(item["expires_at"]["N"]) == int(clock.now) + settings.session_seconds
    assert read_inside(aws.dynamodb, aws.table) == 1


def test_enter_records_the_arrival_and_redirects(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1))
    response = call(aws, clock, "enter", token(1), settings)
    assert response.status == 302
    assert response.headers["Location"] == f"{ORIGIN}?beekeeper_token={token(1)}"
    item = aws.item(visitor_key(token(1).id))
    assert item is not None and item["state"]["S"] == "inside"
    assert int(item["arrived_at"]["N"]) == int(clock.now)
    # Not admitted: still sent on to the shop, whose /client check says no.
    stranger = call(aws, clock, "enter", token(9), settings)
    assert (stranger.status, aws.item(visitor_key(token(9).id))) == (302, None)
    assert answer(call(aws, clock, "client", token(9), settings)) == {"allow": False}


def test_leaving_the_shop_frees_the_place_once(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1), token(2))
    call(aws, clock, "enter", token(1), settings)
    assert answer(call(aws, clock, "leave", token(1), settings)) == {"left": True}
    assert answer(call(aws, clock, "leave", token(1), settings)) == {"left": False}
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": False}
    listed = aws.dynamodb.query(
        TableName=aws.table,
        IndexName=LEAVING_INDEX,
        KeyConditionExpression="#l = :v",
        ExpressionAttributeNames={"#l": LEAVING_ATTRIBUTE},
        ExpressionAttributeValues={":v": {"S": LEAVING_VALUE}},
    )["Items"]
    assert [item["pk"]["S"] for item in listed] == [visitor_key(token(1).id)]
    report = rounds(aws, clock)
    assert report.left == 1
    assert read_inside(aws.dynamodb, aws.table) == 1
    item = aws.item(visitor_key(token(1).id))
    assert item is not None and LEAVING_ATTRIBUTE not in item and "place_freed" in item
    # Its old deadline comes and goes: the place is not freed a second time.
    clock.now += settings.claim_seconds + 1
    assert rounds(aws, clock).ended == 1  # token 2's claim only
    assert read_inside(aws.dynamodb, aws.table) == 0


def test_a_waiting_visitor_leaves_without_freeing_anything(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1))
    assert answer(call(aws, clock, "leave", token(5), settings)) == {"left": True}
    report = rounds(aws, clock)
    assert report.left == 0
    assert read_inside(aws.dynamodb, aws.table) == 1
    item = aws.item(visitor_key(token(5).id))
    assert item is not None and item["state"]["S"] == "left" and LEAVING_ATTRIBUTE not in item


@pytest.mark.parametrize("tok", [None, Token("short", 1)])
def test_leave_without_a_usable_token_writes_nothing(
    aws: Aws, clock: FakeClock, tok: Token | None
) -> None:
    settings = capacity_room()
    assert answer(call(aws, clock, "leave", tok, settings)) == {"left": False}
    assert aws.dynamodb.scan(TableName=aws.table)["Items"] == []


def test_an_expired_place_can_not_be_left(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1))
    clock.now += settings.claim_seconds
    assert answer(call(aws, clock, "leave", token(1), settings)) == {"left": False}


def test_a_lowered_cap_admits_nobody_until_enough_leave(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room()
    admit(aws, clock, settings, token(1), token(2), token(3))
    lowered = places.admit(
        aws.dynamodb, aws.table, [token(4)], now=clock.now, settings=settings, max_inside=2
    )
    assert lowered.full
    for tok in (token(1), token(2)):
        call(aws, clock, "leave", tok, settings)
    rounds(aws, clock)
    assert read_inside(aws.dynamodb, aws.table) == 1
    assert places.admit(
        aws.dynamodb, aws.table, [token(4)], now=clock.now, settings=settings, max_inside=2
    ).written == [token(4).id]
    assert aws.item(INSIDE_KEY) is not None


def test_a_session_shorter_than_the_claim_ends_on_time(aws: Aws, clock: FakeClock) -> None:
    settings = capacity_room().replace(session_minutes=0.2, claim_minutes=2)
    admit(aws, clock, settings, token(1))
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": True}
    clock.now += settings.session_seconds + 1  # idle: ended long before the claim deadline
    report = rounds(aws, clock)
    assert report.ended == 1
    assert read_inside(aws.dynamodb, aws.table) == 0
