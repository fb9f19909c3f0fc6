"""Many visitors' and the operator's journey through a running room, beyond `beekeeper check`.

One visitor's journey (the marketing link to a redeem, and a leave in capacity mode) is the
product's own, `beekeeper check` (cli/check/journey.py), which tests/aws runs on a deployed
room and tests/integration/test_check_local.py on a local one. The steps here add what a check
must not do to a real room: several visitors admitted once and in order, `off` and `rate`.
Each step asserts what a shop relies on and returns figures for the report. The room is reached
over HTTP(S) with the check's own client (redirects are read, never followed) and operated with
the `beekeeper` command; the room's table is read to count admissions.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from beekeeper.cli.check.channel import ChannelConfig, subscribed
from beekeeper.cli.check.http import Answer, send
from beekeeper.core import push
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    COOKIE_NAME,
    TICKET_ATTRIBUTE,
    Token,
    origin_url_with_token,
    visitor_key,
)
from beekeeper.core.headers import browser_origin
from beekeeper.core.tickets import CLAIMS, JWKS_MAX_AGE_SECONDS, issuer_of, jwks_url
from tests.support.join_work import solved_link

Beekeeper = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


@dataclass
class JourneyRoom:
    """A running room and what the journey needs to reach it."""

    name: str
    marketing_url: str
    page_url: str
    client_check_url: str
    origin: str
    display_name: str
    beekeeper: Beekeeper  # runs `beekeeper ARGS...` for this room's config directory
    dynamodb: Any  # a client for the room's table
    table: str
    report: list[str] = field(default_factory=list)
    # A deployed room's origin (the API's stage URL, output OriginUrl), which only its edge may
    # use; None for a local room, whose edge and origin are one process.
    origin_url: str | None = None

    @property
    def polling_url(self) -> str:
        return self.route_url("polling")

    def route_url(self, name: str) -> str:
        """A route beside the page (/polling, /enter, /leave: one stage, one origin)."""
        return self.page_url.removesuffix("room") + name

    def note(self, line: str) -> None:
        self.report.append(line)


def get(url: str, cookie: str | None = None) -> Answer:
    """One GET, as `beekeeper check` sends it; a redirect is returned, not followed."""
    return send(url, headers={"Cookie": cookie} if cookie else None)


def cookie_of(answer: Answer) -> str:
    (set_cookie,) = answer.headers.get("set-cookie", [])
    name, _, value = set_cookie.split(";", 1)[0].partition("=")
    assert name == COOKIE_NAME, set_cookie
    return value


def wait_for(check: Callable[[], Any], timeout: float, interval: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


# -- the visitor ------------------------------------------------------------------------------


def solved_links(room: JourneyRoom, visitors: int) -> list[str]:
    """The work of `visitors` new visitors done first, as their work pages do it: each asks the
    marketing link, which answers with a redirect to `work#<challenge>` (the room's default
    join_work), and solves it. What is left is the link with each solution: the places, taken
    in a burst afterwards, so the line forms faster than the room lets it in."""
    started = time.monotonic()
    links = []
    challenges = set()
    for index in range(visitors):
        challenged = get(room.marketing_url)
        location = challenged.header("location")
        solved = solved_link(room.marketing_url, challenged.status, location)
        assert solved is not None, (challenged.status, location)
        assert not challenged.headers.get("set-cookie")
        if index == 0:
            room.note("marketing link: 302 to the work page with a challenge, no cookie yet")
        challenges.add(location)
        links.append(solved)
    room.note(
        f"the work of {visitors} visitors: {time.monotonic() - started:.1f} s with the "
        f"reference solver, on {len(challenges)} challenges (the edge's shared copies), each "
        "with a nonce of its own"
    )
    return links


def the_challenge_is_shared_at_the_edge(room: JourneyRoom) -> None:
    """The bare link's answer to a browser is kept by the edge for SHARED_SECONDS: two asks in
    a row, within its lifetime, get the same challenge, the second from the edge's copy."""

    def shared() -> bool:
        first, second = get(room.marketing_url), get(room.marketing_url)
        return (
            first.header("location") == second.header("location")
            and "hit" in (second.header("x-cache") or "").lower()
        )

    assert wait_for(shared, 10, 0.2, "the challenge from the edge's copy")
    room.note("marketing link: the bare link's challenge comes from the edge's copy")


def marketing_link_sets_the_cookie(room: JourneyRoom, solved: str) -> str:
    answer = get(solved)
    assert answer.status == 302, (answer.status, answer.body[:200])
    (set_cookie,) = answer.headers["set-cookie"]
    # The page learns its turn from the fragment: the cookie is HttpOnly.
    ordinal = set_cookie.split(";", 1)[0].rsplit(".", 1)[1]
    assert answer.header("location") == f"room#turn={ordinal}"
    attributes = [part.strip() for part in set_cookie.split(";")]
    assert "HttpOnly" in attributes and "SameSite=Lax" in attributes
    token = cookie_of(answer)
    assert Token.parse(token) is not None
    room.note(
        "marketing link with the solution: 302 to the page with an HttpOnly first-party cookie"
    )
    return token


def page_loads_with_its_csp(room: JourneyRoom, token: str) -> None:
    answer = get(room.page_url, cookie=f"{COOKIE_NAME}={token}")
    assert answer.status == 200
    assert answer.header("content-type") == "text/html; charset=utf-8"
    html = answer.body.decode("utf-8")
    assert room.display_name in html
    assert '<meta http-equiv="Content-Security-Policy"' in html  # the page's own policy
    # ... and the header that forbids framing, which a meta policy can not.
    assert "frame-ancestors 'none'" in (answer.header("content-security-policy") or "")
    assert answer.header("x-frame-options") == "DENY"
    room.note(f"page: 200, {len(answer.body):,} bytes, with its Content-Security-Policy")


def polling(room: JourneyRoom, token: str) -> dict[str, Any]:
    answer = get(room.polling_url, cookie=f"{COOKIE_NAME}={token}")
    assert answer.status == 200, (answer.status, answer.body[:200])
    assert answer.header("cache-control") == "no-store"
    body: dict[str, Any] = answer.json()
    return body


def shared_state_comes_from_the_edge(room: JourneyRoom) -> None:
    """The shared state: the same answer for everyone, kept by the edge (a repeat within its
    lifetime is the edge's copy); a deployed room's origin refuses anyone but its edge."""
    url = room.route_url("state")
    first = get(url)
    assert first.status == 200, (first.status, first.body[:200])
    assert first.header("cache-control") == "public, max-age=2"
    document = first.json()
    assert document["state"] == "open" and document["serving"] >= 0, document
    hit = wait_for(
        lambda: "hit" in (get(url).header("x-cache") or "").lower(), 10, 0.2, "an edge hit"
    )
    assert hit
    note = f"state: {document['state']}, serving {document['serving']}, kept by the edge"
    if room.origin_url is not None:
        direct = get(room.origin_url.rstrip("/") + "/state")
        assert direct.status == 403, (direct.status, direct.body[:200])
        note += "; the origin refuses a request that did not come through the edge (403)"
    room.note(note)


def join(room: JourneyRoom, visitors: int) -> list[str]:
    """`visitors` new visitors, their work done first, then their places one after the other;
    the first one's cookie and page checked."""
    the_challenge_is_shared_at_the_edge(room)
    first, *others = solved_links(room, visitors)
    tokens = [marketing_link_sets_the_cookie(room, first)]
    tokens += [cookie_of(get(solved)) for solved in others]
    page_loads_with_its_csp(room, tokens[0])
    shared_state_comes_from_the_edge(room)
    return tokens


def polling_shows_a_position(room: JourneyRoom, tokens: list[str]) -> None:
    """Right after joining, the last visitors are still in line and see their place."""
    answers = [polling(room, token) for token in reversed(tokens)]
    waiting = [a for a in answers if not a["allow"]]
    assert waiting, f"everyone was admitted before the first poll: {answers}"
    for answer in waiting:
        assert answer["state"] == "waiting", answer
        assert answer["position"] >= 1 and answer["poll_after"] >= 1
    room.note(
        f"/polling: {len(waiting)} of {len(tokens)} still waiting, positions "
        f"{sorted(a['position'] for a in waiting)}"
    )


def admitted_once_and_in_order(room: JourneyRoom, tokens: list[str], timeout: float) -> None:
    """Every visitor is let through exactly once; report how far the order held."""
    started = time.monotonic()
    origins: dict[str, str] = {}

    def all_admitted() -> bool:
        for token in tokens:
            if token not in origins:
                answer = polling(room, token)
                if answer["allow"]:
                    origins[token] = answer["origin"]
                else:
                    assert answer["state"] == "waiting", answer
        return len(origins) == len(tokens)

    wait_for(all_admitted, timeout, 2.0, f"admitting {len(tokens)} visitors")
    items = [_visitor_item(room, token) for token in tokens]
    assert all(items), "an admitted visitor has no admission item"
    for token, item in zip(tokens, items, strict=True):
        # The redirect carries the token and the ticket the consumer signed for it.
        ticket = item.get(TICKET_ATTRIBUTE, {}).get("S")  # type: ignore[union-attr]
        assert ticket, f"admission {token} has no signed ticket"
        assert origins[token] == origin_url_with_token(room.origin, token, ticket)
    counter = room.dynamodb.get_item(
        TableName=room.table, Key={"pk": {"S": ADMITTED_COUNTER_KEY}}, ConsistentRead=True
    )["Item"]
    assert int(counter["n"]["N"]) == len(tokens), "a visitor was counted twice (or not at all)"
    admitted_at = [int(item["admitted_at"]["N"]) for item in items]  # type: ignore[index]
    inversions = sum(
        1
        for i in range(len(admitted_at))
        for j in range(i + 1, len(admitted_at))
        if admitted_at[j] < admitted_at[i]
    )
    pairs = len(tokens) * (len(tokens) - 1) // 2
    # A standard queue keeps order only loosely: most pairs in join order, not all.
    assert inversions * 2 < pairs, f"{inversions} of {pairs} pairs admitted out of join order"
    room.note(
        f"admission: {len(tokens)} visitors, each once, in {time.monotonic() - started:.0f} s; "
        f"{inversions} of {pairs} pairs out of join order"
    )


def _visitor_item(room: JourneyRoom, token: str) -> dict[str, Any] | None:
    parsed = Token.parse(token)
    assert parsed is not None
    item: dict[str, Any] | None = room.dynamodb.get_item(
        TableName=room.table, Key={"pk": {"S": visitor_key(parsed.id)}}, ConsistentRead=True
    ).get("Item")
    return item


# -- the shop ---------------------------------------------------------------------------------


def client_check(room: JourneyRoom, token: str) -> bool:
    answer = get(f"{room.client_check_url}?token={quote(token, safe='')}")
    assert answer.status == 200
    allow = answer.json()["allow"]
    assert isinstance(allow, bool)
    return allow


def tickets_verify_offline(room: JourneyRoom, tokens: list[str]) -> None:
    """Each admission's ticket verifies, as a shop verifies it with a standard library, against
    the room's published keys: signed by the room (ES256), for the shop, unexpired."""
    import jwt

    issuer = issuer_of(room.marketing_url)
    answer = get(jwks_url(issuer))
    assert answer.status == 200, answer.body
    assert answer.header("cache-control") == f"public, max-age={JWKS_MAX_AGE_SECONDS}"
    keys = {key["kid"]: key for key in answer.json()["keys"]}
    subjects = set()
    for token in tokens:
        item = _visitor_item(room, token)
        assert item is not None
        ticket = item[TICKET_ATTRIBUTE]["S"]
        claims = jwt.decode(
            ticket,
            jwt.PyJWK(keys[jwt.get_unverified_header(ticket)["kid"]]),
            algorithms=["ES256"],
            audience=browser_origin(room.origin),
            issuer=issuer,
            options={"require": list(CLAIMS)},
        )
        assert claims["room"] == room.name
        subjects.add(claims["sub"])
    assert len(subjects) == len(tokens)
    room.note(f"tickets: {len(tokens)} verified offline against {len(keys)} published key(s)")


def client_says_who_came_through(room: JourneyRoom, tokens: list[str]) -> None:
    assert all(client_check(room, token) for token in tokens)
    ordinal = Token.parse(tokens[0]).ordinal  # type: ignore[union-attr]
    forged = str(Token.issue(ordinal, secrets.token_bytes))
    assert client_check(room, forged) is False
    assert client_check(room, "not-a-token") is False
    room.note(f"/client: true for the {len(tokens)} admitted, false for a forged token")


# -- the operator -----------------------------------------------------------------------------


def run(room: JourneyRoom, *args: str) -> str:
    done = room.beekeeper(args)
    assert done.returncode == 0, f"beekeeper {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def off_lets_new_visitors_into_the_shop(room: JourneyRoom, within: float = 10.0) -> None:
    """While the room is off a new visitor takes a place without work and is let in at once,
    with a ticket like any admission: the shop's check needs no change for `off`."""
    run(room, "off", room.name)
    started = time.monotonic()
    try:
        # Once the switch has reached the marketing link, a place without a solution.
        placed = wait_for(
            lambda: (
                (answer := get(room.marketing_url)).status == 302
                and "#turn=" in (answer.header("location") or "")
                and answer
            ),
            within,
            0.5,
            "after `beekeeper off`, a new visitor given a place without work",
        )
        token = cookie_of(placed)
        admitted = wait_for(
            lambda: (answer := polling(room, token)).get("allow") and answer,
            within,
            0.5,
            "after `beekeeper off`, the new visitor let in",
        )
        assert "beekeeper_ticket=" in admitted["origin"], admitted
        room.note(
            f"off: a new visitor let into the shop with a ticket after "
            f"{time.monotonic() - started:.1f} s"
        )
    finally:
        run(room, "on", room.name)


def a_subscribed_page_sees_a_hold(room: JourneyRoom, within: float | None = 2.0) -> None:
    """The page's push channel as the page finds it: where its config says, with the key it
    carries, allowed by its policy. A subscriber sees `beekeeper hold` (and `resume`), within
    `within` s of the publish unless None (how long it took is noted either way), and the
    page's key can not publish. The subscription is `beekeeper check`'s own
    (cli/check/channel.py)."""
    page = get(room.page_url).body.decode("utf-8")
    config = ChannelConfig.of_page(page)
    assert config is not None, "the page's config names no push channel"
    policy = html.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    )
    realtime = config.url.removesuffix(push.REALTIME_PATH)
    assert f"connect-src 'self' {realtime};" in policy, policy
    with subscribed(config, time.time) as subscription:
        # The page's key may subscribe, never publish (publishing is by IAM only).
        refused = subscription.publish_with_page_key()
        assert refused["type"] == "publish_error", refused

        def seen(reason: str) -> tuple[dict[str, Any], float]:
            event, _took = subscription.wait_for(lambda found: found["reason"] == reason, 30)
            return event, time.time() * 1000 - event["seq"]

        run(room, "hold", room.name)
        held, delay_ms = seen("hold")
        # Announced: the line moves on until the hold's moment, which the newest point states.
        newest = held["doc"]["history"].split(" ")[-1].split(":")
        assert held["doc"]["state"] == "open" and int(newest[-1]) > 0, held["doc"]
        run(room, "resume", room.name)
        resumed, resume_ms = seen("resume")
        assert resumed["doc"]["state"] == "open"
    # From the publish (its sequence number is its time, on the operator's clock) to the page.
    if within is not None:
        assert max(delay_ms, resume_ms) <= within * 1000, (delay_ms, resume_ms)
    room.note(f"push: a subscribed page saw hold after {delay_ms / 1000:.1f} s and resume "
              f"after {resume_ms / 1000:.1f} s")  # fmt: skip


def rate_changes_the_status(room: JourneyRoom, rate: int) -> None:
    run(room, "rate", room.name, str(rate))
    status = json.loads(run(room, "status", room.name, "--json"))
    assert (status["rate"], status["operator_rate"], status["enabled"]) == (rate, rate, True)
    room.note(f"rate: `beekeeper status` shows {rate}/min right after `beekeeper rate`")
