"""Presence on moto: heartbeats through the /presence route's real templates hold a place for
the grace, the warden frees a place whose heartbeats stopped a grace after the last one (even
when a /client check had set a whole session before), and a room without presence keeps
today's sessions."""

from __future__ import annotations

import json
from typing import Any

from beekeeper.apigateway.room import HttpResponse
from beekeeper.core.datamodel import Token, visitor_key
from beekeeper.core.presence import look_within
from beekeeper.core.settings import RoomSettings
from beekeeper.room.places import Warden, read_inside
from tests.support.pipeline import Aws, FakeClock, admit_with_places, room, visitor_request

ORIGIN = "https://shop.example.com/sale"
GRACE = 20


def presence_room(grace: int = GRACE, **changes: Any) -> RoomSettings:
    return room(
        max_inside=3,
        session_minutes=5,
        claim_minutes=2,
        presence_grace_seconds=grace,
        presence_idle_minutes=4,
        **changes,
    )


def token(n: int) -> Token:
    return Token(f"{n:0>22}", n)


def call(
    aws: Aws, clock: FakeClock, route: str, tok: Token | None, settings: RoomSettings
) -> HttpResponse:
    """A request to a capacity route through its real templates, as the script sends a
    heartbeat: ?token=, no cookie, no body."""
    return visitor_request(aws, clock, route, tok, settings, origin=ORIGIN)


def answer(response: HttpResponse) -> Any:
    assert response.status == 200, (response.status, response.body)
    return json.loads(response.body)


def admit(aws: Aws, clock: FakeClock, settings: RoomSettings, *tokens: Token) -> None:
    outcome = admit_with_places(aws, clock, settings, *tokens)
    assert outcome.written == [t.id for t in tokens]


def every_second(aws: Aws, clock: FakeClock, settings: RoomSettings, seconds: int) -> list[float]:
    """The minute's first consumer: a warden round every second for `seconds`; the moments at
    which it freed a place."""
    warden = Warden(aws.dynamodb, aws.table, clock, look_within(settings), pauses=clock.pauses())
    freed: list[float] = []
    for _ in range(seconds):
        clock.now += 1
        report = warden.run()
        freed += [clock.now] * report.ended
    return freed


def state(aws: Aws, tok: Token) -> str | None:
    item = aws.item(visitor_key(tok.id))
    return item["state"]["S"] if item else None


def test_a_heartbeat_holds_the_place_for_the_grace_and_says_how_often_to_beat(
    aws: Aws, clock: FakeClock
) -> None:
    settings = presence_room()
    admit(aws, clock, settings, token(1))
    assert answer(call(aws, clock, "presence", token(1), settings)) == {
        "present": True,
        "beat_seconds": GRACE // 3,
        "idle_seconds": 4 * 60,
    }
    item = aws.item(visitor_key(token(1).id))
    assert item is not None
    # The first heartbeat is the arrival, as a shop's first /client check would be.
    assert item["state"]["S"] == "inside"
    assert int(item["expires_at"]["N"]) == int(clock.now) + GRACE


def test_a_closed_tab_frees_its_place_a_grace_after_its_last_heartbeat(
    aws: Aws, clock: FakeClock
) -> None:
    settings = presence_room()
    admit(aws, clock, settings, token(1), token(2))
    # Both arrive through /enter (a session: 5 minutes); the warden's first look at them comes
    # meanwhile and finds their session's deadline.
    for tok in (token(1), token(2)):
        assert call(aws, clock, "enter", tok, settings).status == 302
    assert every_second(aws, clock, settings, GRACE + 5) == []
    # Then their pages beat. The shop's server checks visitor 1 on a page view (a whole
    # session again), the page that view loads beats at once, and visitor 1 closes the tab.
    assert answer(call(aws, clock, "presence", token(2), settings))["present"] is True
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": True}
    assert answer(call(aws, clock, "presence", token(1), settings))["present"] is True
    closed = clock.now
    freed: list[float] = []
    for _ in range(6):
        freed += every_second(aws, clock, settings, GRACE // 3)
        assert answer(call(aws, clock, "presence", token(2), settings))["present"] is True
    assert len(freed) == 1
    # Freed within a second or two of the grace running out, not a session later.
    assert closed + GRACE < freed[0] <= closed + GRACE + 2
    assert state(aws, token(1)) == "ended" and state(aws, token(2)) == "inside"
    assert read_inside(aws.dynamodb, aws.table) == 1
    # The tab comes back (or a heartbeat was late): the place is gone, and the script is told.
    assert answer(call(aws, clock, "presence", token(1), settings)) == {"present": False}
    assert answer(call(aws, clock, "client", token(1), settings)) == {"allow": False}


def test_heartbeats_alone_keep_a_place_for_longer_than_a_session(
    aws: Aws, clock: FakeClock
) -> None:
    settings = presence_room()
    admit(aws, clock, settings, token(1))
    for _ in range(3 * settings.session_seconds // 5):  # a beat every 5 s for three sessions
        assert answer(call(aws, clock, "presence", token(1), settings))["present"] is True
        assert every_second(aws, clock, settings, 5) == []
    assert state(aws, token(1)) == "inside"
    assert read_inside(aws.dynamodb, aws.table) == 1


def test_the_warden_looks_at_every_place_within_the_grace(aws: Aws, clock: FakeClock) -> None:
    settings = presence_room()
    admit(aws, clock, settings, token(1))
    assert call(aws, clock, "enter", token(1), settings).status == 302  # a session: 5 minutes
    warden = Warden(aws.dynamodb, aws.table, clock, look_within(settings), pauses=clock.pauses())
    looks = 0
    for _ in range(settings.session_seconds - 10):
        clock.now += 1
        looks += warden.run().renewed
    # Untouched for most of a session, yet looked at once a grace: a heartbeat could have come.
    assert looks >= (settings.session_seconds - 10) // GRACE - 1
    # And the session's own end still frees it.
    assert len(every_second(aws, clock, settings, 12)) == 1


def test_without_presence_a_heartbeat_renews_the_session_and_the_warden_waits_for_it(
    aws: Aws, clock: FakeClock
) -> None:
    settings = presence_room(grace=0)
    admit(aws, clock, settings, token(1))
    assert answer(call(aws, clock, "presence", token(1), settings)) == {
        "present": True,
        "beat_seconds": settings.session_seconds // 3,
        "idle_seconds": 4 * 60,
    }
    item = aws.item(visitor_key(token(1).id))
    assert item is not None
    assert int(item["expires_at"]["N"]) == int(clock.now) + settings.session_seconds
    warden = Warden(aws.dynamodb, aws.table, clock, look_within(settings), pauses=clock.pauses())
    assert warden.look_within is None
    clock.now += settings.claim_seconds + 1
    report = warden.run()
    assert report.renewed == 1  # looked at once, at the claim deadline, then at the session's
    clock.now += 60
    assert warden.run().renewed == 0


def test_no_usable_token_holds_nothing(aws: Aws, clock: FakeClock) -> None:
    settings = presence_room()
    assert answer(call(aws, clock, "presence", None, settings)) == {"present": False}
    assert answer(call(aws, clock, "presence", token(4), settings)) == {"present": False}
    assert aws.item(visitor_key(token(4).id)) is None
