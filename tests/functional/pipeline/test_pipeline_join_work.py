"""The marketing link with join_work on, against moto: a place costs a solved challenge, once."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from beekeeper.core.datamodel import CONFIG_FRESH_SECONDS, COOKIE_NAME, work_key
from beekeeper.core.headers import SHARED_CHALLENGE_HEADERS
from beekeeper.core.join_work import (
    CHALLENGE_LIFETIME_SECONDS,
    FLOOD_MAX_FACTOR,
    SHARED_SECONDS,
    Challenge,
    Solution,
    solve,
    target_for,
    visitor_nonce,
)
from beekeeper.room.producer import Producer
from tests.support.pipeline import Aws, FakeClock, producer

WORK_MS = 10  # cheap to solve in a test; the rules do not depend on it


def request(work: str | None = None, cookie: str | None = None) -> dict[str, Any]:
    headers = {"Host": "abc.execute-api.us-east-1.amazonaws.com"}
    if cookie:
        headers["Cookie"] = cookie
    return {
        "httpMethod": "GET",
        "path": "/beekeeper",
        "headers": headers,
        "queryStringParameters": {"work": work} if work is not None else None,
        "requestContext": {"path": "/prod/beekeeper"},
    }


def challenge_of(response: dict[str, Any]) -> Challenge:
    assert response["statusCode"] == 302, response
    location = response["headers"]["Location"]
    assert location.startswith("work#"), location
    assert "Set-Cookie" not in response["headers"]
    found = Challenge.parse(location.removeprefix("work#"))
    assert found is not None
    return found


def working(aws: Aws, clock: FakeClock, **settings: Any) -> Producer:
    return producer(aws, clock, gate=aws.gate(), join_work=WORK_MS, **settings)


def test_a_bare_request_gets_the_work_page_and_no_place(aws: Aws, clock: FakeClock) -> None:
    p = working(aws, clock)
    challenge = challenge_of(p.handle(request()))
    assert challenge.issued_at == int(clock.now)
    assert challenge.target == target_for(WORK_MS)
    assert aws.queue_bodies() == []
    assert aws.item("arrivals#0") is None and aws.item(work_key(challenge.nonce)) is None


def test_a_solved_challenge_gives_one_place_and_a_replay_none(aws: Aws, clock: FakeClock) -> None:
    p = working(aws, clock)
    solution = str(solve(challenge_of(p.handle(request()))))
    clock.now += 2
    joined = p.handle(request(solution))
    assert joined["statusCode"] == 302 and joined["headers"]["Location"].startswith("room#turn=")
    assert joined["headers"]["Set-Cookie"].startswith(f"{COOKIE_NAME}=")
    assert len(aws.queue_bodies()) == 1
    # The nonce is spent, and goes with the challenge's lifetime.
    nonce = Solution.parse(solution).challenge.nonce  # type: ignore[union-attr]
    spent = aws.item(work_key(nonce))
    assert spent is not None
    assert int(spent["ttl"]["N"]) == int(clock.now) - 2 + CHALLENGE_LIFETIME_SECONDS

    replay = p.handle(request(solution))
    challenge_of(replay)  # a fresh challenge, no second place
    assert len(aws.queue_bodies()) == 1
    # Another container of the same room refuses it too: the record is in the table.
    assert challenge_of(working(aws, clock).handle(request(solution)))
    assert len(aws.queue_bodies()) == 1


def test_the_bare_links_challenge_is_shared_and_each_browser_gets_a_place_for_its_own_work(
    aws: Aws, clock: FakeClock
) -> None:
    """The bare link's answer may be given by the edge to every browser for SHARED_SECONDS:
    it says so, carries nothing about one visitor, and gives one place per visitor nonce."""
    p = working(aws, clock)
    bare = p.handle(request())
    assert bare["headers"]["Cache-Control"] == SHARED_CHALLENGE_HEADERS["Cache-Control"]
    assert f"s-maxage={SHARED_SECONDS}" in bare["headers"]["Cache-Control"]
    shared = challenge_of(bare)
    draw = iter(range(1, 100))
    nonces = [visitor_nonce(lambda n: next(draw).to_bytes(n, "big")) for _ in range(3)]
    for visitor in nonces:
        joined = p.handle(request(str(solve(shared, visitor))))
        assert joined["statusCode"] == 302 and joined["headers"]["Cache-Control"] == "no-store"
        assert joined["headers"]["Location"].startswith("room#turn=")
    assert len(aws.queue_bodies()) == 3
    # The same visitor's work again: no second place, a fresh challenge that is not kept.
    replay = p.handle(request(str(solve(shared, nonces[0]))))
    challenge_of(replay)
    assert replay["headers"]["Cache-Control"] == "no-store"
    assert len(aws.queue_bodies()) == 3
    for visitor in nonces:
        assert aws.item(work_key(f"{shared.nonce}.{visitor}")) is not None


@pytest.mark.parametrize("kind", ["stale", "forged", "wrong", "malformed", "another room"])
def test_a_bad_solution_is_refused_with_a_fresh_challenge_never_an_error(
    aws: Aws, clock: FakeClock, kind: str
) -> None:
    p = working(aws, clock)
    issued = challenge_of(p.handle(request()))
    solution = solve(issued)
    if kind == "stale":
        clock.now += CHALLENGE_LIFETIME_SECONDS
        text = str(solution)
    elif kind == "forged":
        easier = dataclasses.replace(issued, target=issued.target * 8)
        text = str(solve(easier))
    elif kind == "wrong":
        text = str(dataclasses.replace(solution, counters=(0,) * len(solution.counters)))
        if Solution.parse(text) == solution:
            pytest.skip("every first counter solves: nothing wrong to send")
    elif kind == "malformed":
        text = str(issued) + "~<script>"
    else:
        other = producer(aws, clock, gate=aws.gate("other"), join_work=WORK_MS)
        text = str(solve(challenge_of(other.handle(request()))))
    fresh = challenge_of(p.handle(request(text)))
    assert fresh.nonce != issued.nonce
    assert aws.queue_bodies() == []


def test_join_work_0_is_todays_link_whatever_the_request_carries(
    aws: Aws, clock: FakeClock
) -> None:
    p = producer(aws, clock, gate=aws.gate(), join_work=0)
    for work in (None, "anything", str(solve(challenge_of(working(aws, clock).handle(request()))))):
        response = p.handle(request(work))
        assert response["statusCode"] == 302 and response["headers"]["Location"].startswith(
            "room#turn="
        )
        assert response["headers"]["Set-Cookie"].startswith(f"{COOKIE_NAME}=")
    assert len(aws.queue_bodies()) == 3


def test_a_returning_visitor_keeps_their_place_without_work(aws: Aws, clock: FakeClock) -> None:
    p = working(aws, clock)
    joined = p.handle(request(str(solve(challenge_of(p.handle(request()))))))
    cookie = joined["headers"]["Set-Cookie"].split(";", 1)[0]
    again = p.handle(request(cookie=cookie))
    assert again["statusCode"] == 302 and again["headers"]["Location"].startswith("room#turn=")
    assert len(aws.queue_bodies()) == 1


def test_another_pages_link_with_a_solution_changes_nothing_for_a_visitor_in_line(
    aws: Aws, clock: FakeClock
) -> None:
    """Any page can send a visitor's browser to the marketing link with a solution it paid
    for, the visitor's cookie riding along: the visitor keeps their place and their cookie,
    and the solution is not spent (it is its solver's alone, once)."""
    p = working(aws, clock)
    joined = p.handle(request(str(solve(challenge_of(p.handle(request()))))))
    cookie = joined["headers"]["Set-Cookie"].split(";", 1)[0]
    foreign = solve(challenge_of(p.handle(request())))
    again = p.handle(request(str(foreign), cookie=cookie))
    assert again["statusCode"] == 302 and again["headers"]["Location"].startswith("room#turn=")
    assert "Set-Cookie" not in again["headers"]
    assert len(aws.queue_bodies()) == 1
    assert aws.item(work_key(foreign.spent_as)) is None


def test_a_room_with_join_work_needs_its_gate(aws: Aws, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="join gate"):
        producer(aws, clock, join_work=WORK_MS)


def test_under_a_flood_a_place_costs_more_in_proportion_to_the_join_rate(
    aws: Aws, clock: FakeClock
) -> None:
    """600/min: a flood from 100 joins a second. The join rate is the arrival counters' growth
    between two config reads, whoever made the joins."""
    p = working(aws, clock, rate=600)
    calm = challenge_of(p.handle(request()))

    def joined_elsewhere(count: int) -> None:  # other containers' places, on one shard
        aws.dynamodb.update_item(
            TableName=aws.table,
            Key={"pk": {"S": "arrivals#3"}},
            UpdateExpression="ADD n :count",
            ExpressionAttributeValues={":count": {"N": str(count)}},
        )

    joined_elsewhere(1_500)  # 300 a second over the next 5 s
    clock.now += CONFIG_FRESH_SECONDS
    flooded = challenge_of(p.handle(request()))
    assert calm.target / flooded.target == pytest.approx(3.0, rel=0.02)
    joined_elsewhere(20_000)  # far beyond: the cap
    clock.now += CONFIG_FRESH_SECONDS
    capped = challenge_of(p.handle(request()))
    assert calm.target / capped.target == pytest.approx(FLOOD_MAX_FACTOR, rel=0.02)
