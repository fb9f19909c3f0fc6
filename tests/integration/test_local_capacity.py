"""A capacity-mode local room over HTTP (`beekeeper local --max-inside 3`): the real room code,
the real templates, real minutes for sessions.

Six visitors join; three go in. One leaves through the shop (its server calls /leave), and the
next waiting visitor goes in within 5 s. One of those inside stays idle past the session and
its place goes to the next.

The demo shop of `beekeeper local --demo --max-inside 1` does the shop's part: its page shows
the room's count, and its "Done shopping" button ends the visit with /leave, server to server,
so the next in line goes in within 5 s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from beekeeper.core import datamodel, tickets
from beekeeper.core.local_room import FLAGS_ONLY_RATE, LOCAL_SETTINGS_KEY
from beekeeper.local.demo_shop import ADMITTED_TEXT, DONE_BUTTON, DONE_PATH, LEFT_TEXT
from tests.support.localroom.http import enter_shop, get
from tests.support.localroom.process import LocalProcess, start_local, wait_until
from tests.support.localroom.visitor import join

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the test reads the redirects
SESSION_MINUTES = 0.2  # 12 s
CLAIM_MINUTES = 0.5  # 30 s: longer than the test's steps, so nobody here is a no-show
MINUTE_SECONDS = 10


def _running(args: list[str], config_dir: Path, name: str) -> Iterator[LocalProcess]:
    local = start_local(args, config_dir, name=name)
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


@pytest.fixture()
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    yield from _running(
        ["--origin", ORIGIN, "--rate", "600", "--minute-seconds", str(MINUTE_SECONDS),
         "--max-inside", "3", "--session-minutes", str(SESSION_MINUTES),
         "--claim-minutes", str(CLAIM_MINUTES)],
        tmp_path_factory.mktemp("config"),
        "seats",
    )  # fmt: skip


def route(room: LocalProcess, name: str) -> str:
    return room.urls["page URL"].replace("/room", f"/{name}")


def polling(room: LocalProcess, token: str) -> dict[str, Any]:
    answer = get(route(room, "polling"), cookie=f"{datamodel.COOKIE_NAME}={token}")
    assert answer.status == 200
    return answer.json()  # type: ignore[no-any-return]


def shop_checks(room: LocalProcess, token: str) -> bool:
    """The shop's server asks /client (and so renews the visitor's session)."""
    answer = get(f"{route(room, 'client')}?token={token}")
    assert answer.status == 200
    return bool(answer.json()["allow"])


def test_three_inside_a_leave_and_an_idle_session_each_let_the_next_in(
    room: LocalProcess,
) -> None:
    tokens = [join(room) for _ in range(6)]
    first_three, rest = tokens[:3], tokens[3:]
    # Each of the first three follows its page's redirect through /enter as soon as it is let
    # in, and the shop's pages then ask /client (renewing the session), as a visitor's would:
    # when the six joins straddle a room minute on a busy machine, the first are let in a
    # minute before the third, and a session of 12 s left idle would have run out meanwhile.
    entered: dict[str, Any] = {}

    def let_in_and_entered() -> bool:
        for token in first_three:
            if token not in entered and polling(room, token)["allow"]:
                entered[token] = get(
                    route(room, "enter"), cookie=f"{datamodel.COOKIE_NAME}={token}"
                )
        return all(shop_checks(room, token) for token in entered) and len(entered) == 3

    # Within the room's next minute; three of them, for a busy machine's slow room.
    admitted = wait_until(let_in_and_entered, 3 * MINUTE_SECONDS)
    assert admitted, [polling(room, t) for t in tokens]
    # The shop is full: the rest wait, and are told why.
    waiting = [polling(room, t) for t in rest]
    assert [a["state"] for a in waiting] == ["waiting"] * 3
    assert all(a["full"] and a["max_inside"] == 3 and a["inside"] == 3 for a in waiting)
    assert [a["position"] for a in waiting] == [1, 2, 3]

    # The admitted went through /enter: arrival recorded, on to the shop with a ticket.
    for token in first_three:
        enter = entered[token]
        assert enter.status == 302
        # The token, and the ticket the consumer signed (the renewed item carries it).
        location = enter.header("Location") or ""
        shop, ticket = location.split("&beekeeper_ticket=")
        assert shop == f"{ORIGIN}?beekeeper_token={token}"
        assert tickets.TICKET_PATTERN.fullmatch(ticket), location
        assert shop_checks(room, token)

    # One finishes: the shop's server says so. The next in line goes in within 5 s.
    left_at = time.monotonic()
    answer = get(f"{route(room, 'leave')}?token={first_three[0]}", method="POST")
    assert (answer.status, answer.json()) == (200, {"left": True})
    assert not shop_checks(room, first_three[0])
    assert wait_until(lambda: polling(room, rest[0])["allow"], 5, interval=0.1)
    assert time.monotonic() - left_at <= 5
    assert polling(room, rest[1])["state"] == "waiting"

    # The other two stay active; the newcomer arrives and then goes idle. Once its session
    # has run out, its place goes to the next in line.
    enter = get(route(room, "enter"), cookie=f"{datamodel.COOKIE_NAME}={rest[0]}")
    assert enter.status == 302
    idle_since = time.monotonic()

    def still_active_and_next_in() -> bool:
        for token in first_three[1:]:
            assert shop_checks(room, token), "an active visitor lost their place"
        return bool(polling(room, rest[1])["allow"])

    assert wait_until(still_active_and_next_in, SESSION_MINUTES * 60 + 10, interval=1.0)
    assert time.monotonic() - idle_since >= SESSION_MINUTES * 60 - 1  # not before it ran out
    assert not shop_checks(room, rest[0])  # its session ended
    assert polling(room, rest[2])["state"] == "waiting"  # still three inside at most


@pytest.fixture()
def demo_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """`beekeeper local --demo --max-inside 1`: the demo shop is the origin."""
    yield from _running(
        ["--demo", "--demo-port", "0", "--rate", "600", "--minute-seconds", "10",
         "--max-inside", "1", "--claim-minutes", str(CLAIM_MINUTES)],
        tmp_path_factory.mktemp("config"),
        "demo-seat",
    )  # fmt: skip


def inside_count(room: LocalProcess) -> int:
    """The room's count of places held (the `inside` item `beekeeper status` reads)."""
    item = room.client("dynamodb").get_item(
        TableName=room.record["TableName"], Key={"pk": {"S": datamodel.INSIDE_KEY}}
    )["Item"]
    return int(item["n"]["N"])


def shop_visit(room: LocalProcess, token: str) -> tuple[str, str]:
    """The page's redirect through /enter into the demo shop; the shop's session cookie and the
    page it shows."""
    enter = get(route(room, "enter"), cookie=f"{datamodel.COOKIE_NAME}={token}")
    assert enter.status == 302
    arrival, page = enter_shop(enter.header("Location") or "")
    assert arrival.status == 303 and page.status == 200, page.text
    return (arrival.header("Set-Cookie") or "").split(";")[0], page.text


def done_shopping(room: LocalProcess, shop_cookie: str) -> str:
    """The Done shopping button: its form's POST to the shop."""
    shop = room.urls["demo shop"].replace("localhost", "127.0.0.1").rstrip("/")
    answer = get(f"{shop}{DONE_PATH}", method="POST", cookie=shop_cookie)
    assert answer.status == 200, answer.text
    return answer.text


def test_done_shopping_in_the_demo_shop_lets_the_next_in(demo_room: LocalProcess) -> None:
    room = demo_room
    first, second = join(room), join(room)
    assert wait_until(lambda: polling(room, first)["allow"], 15)
    assert polling(room, second)["state"] == "waiting"

    shop_cookie, page = shop_visit(room, first)
    assert ADMITTED_TEXT in page and DONE_BUTTON in page
    assert "Inside the shop now: 1 of 1 places held." in page
    assert "at least once every 10 minutes" in page  # the default session
    assert inside_count(room) == 1

    pressed_at = time.monotonic()
    assert LEFT_TEXT in done_shopping(room, shop_cookie)
    assert not shop_checks(room, first)  # the shop's /leave ended the room's session
    assert wait_until(lambda: polling(room, second)["allow"], 5, interval=0.1)
    assert time.monotonic() - pressed_at <= 5

    # The second visitor shops and is done too: with nobody waiting, the count drops.
    shop_cookie, page = shop_visit(room, second)
    assert "Inside the shop now: 1 of 1 places held." in page
    assert LEFT_TEXT in done_shopping(room, shop_cookie)
    assert wait_until(lambda: inside_count(room) == 0, 5, interval=0.1)


@pytest.mark.parametrize("args", [["--max-inside", "3"], ["--demo", "--max-inside", "3"]])
def test_the_capacity_rehearsal_runs_as_written(args: list[str], tmp_path: Path) -> None:
    """`beekeeper local --max-inside 3` and `beekeeper local --demo --max-inside 3`
    (docs/capacity.md): without a room file, --rate or --origin, the demo's rate and the demo
    shop behind it."""
    room = start_local([*args, "--demo-port", "0"], tmp_path, name="readme")
    try:
        running = json.loads(room.record_path.read_text())[LOCAL_SETTINGS_KEY]
        assert (running["max_inside"], running["rate"]) == (3, FLAGS_ONLY_RATE)
        assert f"running at {FLAGS_ONLY_RATE} visitors a minute" in room.output()
        assert urlsplit(running["origin"]).port == urlsplit(room.urls["demo shop"]).port
    finally:
        assert room.interrupt() == 0
