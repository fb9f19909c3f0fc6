"""The demo shop of `beekeeper local --demo` as a WSGI app, with doubles of the room.

In a capacity-mode room it renews the visitor's session with the room on every page view,
shows how full the shop is and ends the visit with the room's /leave; in a rate-mode room it
does none of that. tests/integration/test_local_capacity.py runs it against a real room.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import create_autospec

import pytest

from beekeeper.local.demo_shop import (
    ADMITTED_TEXT,
    DONE_BUTTON,
    DONE_PATH,
    LEFT_TEXT,
    REFUSED_TEXT,
    SESSION_COOKIE,
    CapacityMode,
    DemoShop,
    HttpRoomLink,
    Occupancy,
    RoomFacts,
    TicketCheck,
)
from beekeeper.waiting_room_site import presence

TOKEN = "A" * 22 + ".7"
ROOM = RoomFacts(
    issuer="http://127.0.0.1:9",
    room="local",
    client_url="http://127.0.0.1:9/client",
    marketing_url="http://127.0.0.1:9/beekeeper",
    leave_url="http://127.0.0.1:9/leave",
)


@dataclass
class RoomDouble:
    """The room as the shop's server reaches it: answers set by the test, calls recorded."""

    allow: bool | None = True
    left: bool | None = True
    checks: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)

    def check(self, token: str) -> bool | None:
        self.checks.append(token)
        return self.allow

    def leave(self, token: str) -> bool | None:
        self.leaves.append(token)
        return self.left


@dataclass
class Answer:
    status: str
    headers: dict[str, str]
    text: str

    @property
    def cookie(self) -> str:
        return self.headers.get("Set-Cookie", "").split(";")[0]


def call(shop: DemoShop, path: str, *, method: str = "GET", cookie: str = "") -> Answer:
    path, _, query = path.partition("?")
    found: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        found.update(status=status, headers=dict(headers))

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "HTTP_COOKIE": cookie,
        "wsgi.input": io.BytesIO(),
    }
    body = b"".join(shop(environ, start_response)).decode()
    return Answer(found["status"], found["headers"], body)


class Shop:
    """A demo shop with its doubles, and a visitor who came in through the room."""

    def __init__(self, *, capacity: CapacityMode | None) -> None:
        self.room = RoomDouble()
        self.tickets = create_autospec(TicketCheck, instance=True)
        self.tickets.admit.return_value = {"jti": "j1", "exp": 2_000_000_000}
        self.app = DemoShop(
            room=ROOM,
            shop_origin="http://localhost:8081",
            capacity=capacity,
            clock=lambda: 1_000_000_000.0,
            tickets=self.tickets,
            link=self.room,
        )

    def arrive(self, query: str = f"beekeeper_token={TOKEN}&beekeeper_ticket=a.b.c") -> str:
        arrival = call(self.app, f"/?{query}")
        assert arrival.status == "303 See Other", arrival.text
        assert arrival.headers["Location"] == "/"
        return arrival.cookie


TWO_OF_THREE = Occupancy(inside=2, max_inside=3)


def capacity_mode(occupancy: Occupancy | None = TWO_OF_THREE) -> CapacityMode:
    return CapacityMode(session_minutes=0.5, occupancy=lambda: occupancy)


def test_a_rate_mode_shop_neither_renews_nor_offers_done_shopping() -> None:
    shop = Shop(capacity=None)
    cookie = shop.arrive()
    page = call(shop.app, "/", cookie=cookie)
    assert page.status == "200 OK" and ADMITTED_TEXT in page.text
    assert DONE_BUTTON not in page.text and "Inside the shop" not in page.text
    assert shop.room.checks == []
    assert call(shop.app, DONE_PATH, method="POST", cookie=cookie).status == "404 Not Found"
    assert shop.room.leaves == []


def test_each_page_view_renews_the_session_and_shows_how_full_the_shop_is() -> None:
    shop = Shop(capacity=capacity_mode())
    cookie = shop.arrive()
    assert shop.room.checks == []  # the ticket was verified offline
    for views in (1, 2):
        page = call(shop.app, "/", cookie=cookie)
        assert page.status == "200 OK" and ADMITTED_TEXT in page.text
        assert shop.room.checks == [TOKEN] * views
    assert "Inside the shop now: 2 of 3 places held." in page.text
    assert "at least once every 0.5 minutes" in page.text
    assert f"<form id='done' method='post' action='{DONE_PATH}'>" in page.text
    assert DONE_BUTTON in page.text


@pytest.mark.parametrize("grace", [0, 20])
def test_each_capacity_page_loads_the_presence_script_under_its_policy(grace: int) -> None:
    shop = Shop(capacity=CapacityMode(0.5, lambda: TWO_OF_THREE, presence_grace_seconds=grace))
    page = call(shop.app, "/", cookie=shop.arrive())
    # The room's script, with this visitor's token and the hash of the very bytes served; a
    # place gone sends the tab back here, where the room's /client check ends the visit.
    tag = (
        f'<script src="http://127.0.0.1:9/presence.js" data-token="{TOKEN}" '
        f'data-gone-url="/" integrity="{presence.integrity()}" crossorigin="anonymous" async>'
    )
    assert tag in page.text
    # The policy allows the page's own style (by its hash: the style in the page) and the
    # room's script and its heartbeats, nothing else of anybody's.
    style = re.search(r"<style>(.*?)</style>", page.text, re.S)
    assert style is not None
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()
    assert page.headers["Content-Security-Policy"] == (
        f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; "
        "script-src http://127.0.0.1:9/presence.js; "
        "connect-src http://127.0.0.1:9/presence; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )
    said = f"goes to the next in line {grace} seconds later" if grace else "runs without presence"
    assert said in page.text
    # A page that does not keep a place loads no script.
    left = call(shop.app, DONE_PATH, method="POST", cookie=shop.arrive())
    assert "presence.js" not in left.text


def test_a_rate_mode_shop_loads_no_presence_script() -> None:
    shop = Shop(capacity=None)
    page = call(shop.app, "/", cookie=shop.arrive())
    assert "presence.js" not in page.text and "Content-Security-Policy" not in page.headers


def test_done_shopping_ends_the_visit_with_the_rooms_leave_once() -> None:
    shop = Shop(capacity=capacity_mode())
    cookie = shop.arrive()
    done = call(shop.app, DONE_PATH, method="POST", cookie=cookie)
    assert done.status == "200 OK" and LEFT_TEXT in done.text
    assert "POST /leave" in done.text
    assert shop.room.leaves == [TOKEN]
    assert done.headers["Set-Cookie"].startswith(f"{SESSION_COOKIE}=;")
    assert "Max-Age=0" in done.headers["Set-Cookie"]
    # The shop forgot the session: the old cookie lets nobody in, and a second press is refused.
    assert call(shop.app, "/", cookie=cookie).status == "403 Forbidden"
    again = call(shop.app, DONE_PATH, method="POST", cookie=cookie)
    assert again.status == "403 Forbidden" and REFUSED_TEXT in again.text
    assert shop.room.leaves == [TOKEN]


@pytest.mark.parametrize(
    ("left", "said"),
    [(False, "had already ended your visit"), (None, "could not reach the waiting room")],
)
def test_done_shopping_says_when_the_room_did_not_end_the_visit(
    left: bool | None, said: str
) -> None:
    shop = Shop(capacity=capacity_mode())
    shop.room.left = left
    done = call(shop.app, DONE_PATH, method="POST", cookie=shop.arrive())
    assert done.status == "200 OK" and LEFT_TEXT in done.text and said in done.text


def test_a_session_the_room_ended_ends_the_shops_too() -> None:
    shop = Shop(capacity=capacity_mode())
    cookie = shop.arrive()
    shop.room.allow = False
    page = call(shop.app, "/", cookie=cookie)
    assert page.status == "200 OK" and LEFT_TEXT in page.text
    assert "nobody checked it for 0.5 minutes" in page.text
    assert "Max-Age=0" in page.headers["Set-Cookie"]
    shop.room.allow = True
    assert call(shop.app, "/", cookie=cookie).status == "403 Forbidden"


def test_a_room_that_does_not_answer_keeps_the_visitor_in() -> None:
    shop = Shop(capacity=capacity_mode(occupancy=None))
    cookie = shop.arrive()
    shop.room.allow = None
    page = call(shop.app, "/", cookie=cookie)
    assert page.status == "200 OK" and ADMITTED_TEXT in page.text
    assert "could not reach the waiting room to renew" in page.text
    assert "can not be read just now" in page.text
    shop.room.allow = True
    assert ADMITTED_TEXT in call(shop.app, "/", cookie=cookie).text


def test_a_lifted_cap_is_shown_as_such() -> None:
    shop = Shop(capacity=capacity_mode(occupancy=Occupancy(inside=4, max_inside=0)))
    page = call(shop.app, "/", cookie=shop.arrive())
    assert "Inside the shop now: 4 (no cap just now)." in page.text


@pytest.mark.parametrize(
    "query", ["beekeeper_ticket=a.b.c", "beekeeper_ticket=a.b.c&beekeeper_token=not-a-token"]
)
def test_a_capacity_shop_refuses_a_ticket_without_the_token_and_keeps_it_unused(
    query: str,
) -> None:
    shop = Shop(capacity=capacity_mode())
    refused = call(shop.app, f"/?{query}")
    assert refused.status == "403 Forbidden" and "no valid visitor token" in refused.text
    shop.tickets.admit.assert_not_called()
    # A rate-mode shop needs no token: it lets the ticket alone in, as it always did.
    rate_mode = Shop(capacity=None)
    rate_mode.arrive(query)


def test_done_shopping_is_a_post() -> None:
    shop = Shop(capacity=capacity_mode())
    answer = call(shop.app, DONE_PATH, cookie=shop.arrive())
    assert answer.status == "405 Method Not Allowed" and answer.headers["Allow"] == "POST"
    assert shop.room.leaves == []


def test_the_http_link_never_sends_a_malformed_token() -> None:
    # Port 9 refuses connections: a call made would be None (no answer), not False.
    link = HttpRoomLink(ROOM.client_url, ROOM.leave_url, timeout=1)
    assert link.check("not-a-token") is False
    assert link.leave("") is False
    assert link.check(TOKEN) is None
