"""The waiting room page of a capacity-mode room in headless chromium, against the polling
double: the full shop explained, admission through /enter, the "Leave the line" button."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.page_browser import (
    AXE,
    NEXT_POLL_MS,
    open_room,
    serious_violations,
    text,
    wait_for_requests,
    wait_for_text,
)
from tests.support.polling_double import PollingDouble, serve, waiting, waiting_for_places
from tests.support.sample_room import sample_room

# Each test drives a headless chromium: the full gate's (slow).
pytestmark = [pytest.mark.browser, pytest.mark.slow]

TOKEN = "A" * 22 + ".12"
POSITION = "You are number 12 in line."
FULL_NOTE = "The shop is full: people go in as others leave."


@pytest.fixture
def room() -> Iterator[PollingDouble]:
    with serve(sample_room()) as double:
        yield double


def open_with_cookie(
    new_page: Callable[..., Any], room: PollingDouble, path: str = "/room", init_script: str = ""
) -> Any:
    """The page at `path` for a visitor with a place (TOKEN); `init_script` runs before it."""
    page = new_page()
    if init_script:
        page.add_init_script(init_script)
    page.context.add_cookies([{"name": "beekeeper_token", "value": TOKEN, "url": room.url("/")}])
    page.goto(room.url(path))
    return page


def open_full_shop(new_page: Callable[..., Any], room: PollingDouble, **options: Any) -> Any:
    """The page of visitor number 12 waiting for a full shop, once it says so."""
    room.script(waiting_for_places(12, 300))
    page = open_with_cookie(new_page, room, **options)
    wait_for_text(page, "full-note", FULL_NOTE)
    return page


def test_a_full_shop_is_explained_with_the_estimate(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    page = open_full_shop(new_page, room)
    assert text(page, "position") == POSITION
    assert page.locator('[data-bk="full-note"]').is_visible()
    assert text(page, "wait") == "Estimated wait: about 5 minutes"
    wait_for_text(page, "status", f"{POSITION} {FULL_NOTE} Estimated wait: about 5 minutes.")
    assert page.get_by_role("button", name="Leave the line").is_visible()
    assert page.errors == []


def test_a_full_shop_in_german(new_page: Callable[..., Any], room: PollingDouble) -> None:
    room.script(waiting_for_places(12, 300))
    page = open_room(new_page, room, locale="de-DE")
    wait_for_text(page, "full-note", "Der Shop ist gerade voll: Sobald andere ihn verlassen")
    assert text(page, "position") == "Sie sind Nummer 12 in der Warteschlange."
    assert page.get_by_role("button", name="Warteschlange verlassen").is_visible()


def test_a_shop_with_room_shows_the_usual_text_and_the_button(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting_for_places(12, 300, inside=300))
    page = open_room(new_page, room)
    wait_for_text(page, "position", POSITION)
    assert page.get_by_role("button", name="Leave the line").is_visible()
    assert page.locator('[data-bk="full-note"]').is_hidden()


def test_rate_mode_has_no_leave_button(new_page: Callable[..., Any], room: PollingDouble) -> None:
    room.script(waiting(12, 300))
    page = open_room(new_page, room)
    wait_for_text(page, "position", POSITION)
    assert page.locator('[data-bk="leave"]').is_hidden()
    assert page.locator('[data-bk="full-note"]').is_hidden()
    assert page.get_by_role("button").count() == 0


def test_an_admission_via_enter_goes_through_the_rooms_enter_route(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    shop = room.url("/shop?beekeeper_token=" + TOKEN)
    room.script(waiting_for_places(1, 10), {"allow": True, "origin": shop, "via": "enter"})
    page = open_with_cookie(new_page, room, "/prod/room")
    wait_for_text(page, "position", "You are next in line.")
    page.clock.run_for(NEXT_POLL_MS)
    page.wait_for_url(room.url("/prod/shop?beekeeper_token=entered"), timeout=5_000)
    # Under the stage prefix like /polling, and the cookie went along.
    assert [(e.path, e.cookie) for e in room.enters] == [
        ("/prod/enter", "beekeeper_token=" + TOKEN)
    ]


def test_an_admission_via_an_unknown_route_is_not_followed(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script({"allow": True, "origin": room.url("/shop"), "via": "https://example.org/"})
    page = open_room(new_page, room)
    wait_for_text(page, "retry", "We could not reach the waiting room just now.")
    assert page.url == room.url("/room")
    assert room.enters == []


def test_leaving_the_line_with_the_button(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    page = open_full_shop(new_page, room)
    page.get_by_role("button", name="Leave the line").click()
    wait_for_text(page, "notice-title", "You left the line")
    assert page.locator('[data-bk="waiting"]').is_hidden()
    link = page.get_by_role("link", name="Join the line again")
    assert link.get_attribute("href") == room.url("/beekeeper")
    # Focus is on the message, so the next Tab reaches the link; the live region says it too.
    assert page.evaluate("document.activeElement.dataset.bk") == "notice-title"
    wait_for_text(page, "status", "You left the line.")
    wait_for_requests(room.leaves, 1)
    (leave,) = room.leaves
    assert leave.path == "/leave"
    assert leave.cookie == "beekeeper_token=" + TOKEN
    assert leave.body == b""
    # No more polls after leaving.
    page.clock.run_for(10 * 60_000)
    assert len(room.polls) == 1
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Join the line again"
    # Checked before following the link: the double does not serve /beekeeper (a 404 there
    # is the double's, logged by the next page).
    assert page.errors == []
    page.keyboard.press("Enter")
    page.wait_for_url(room.url("/beekeeper"), timeout=5_000)


def test_the_button_works_from_the_keyboard(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    page = open_full_shop(new_page, room)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Leave the line"
    page.keyboard.press("Enter")
    wait_for_text(page, "notice-title", "You left the line")
    wait_for_requests(room.leaves, 1)


def test_leaving_without_sendbeacon_posts_with_keepalive(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    no_beacon = "delete Navigator.prototype.sendBeacon;"
    page = open_full_shop(new_page, room, path="/prod/room", init_script=no_beacon)
    assert page.evaluate("typeof navigator.sendBeacon") == "undefined"
    with page.expect_request(room.url("/prod/leave")) as sent:
        page.get_by_role("button", name="Leave the line").click()
    assert sent.value.method == "POST"
    wait_for_text(page, "notice-title", "You left the line")
    wait_for_requests(room.leaves, 1)
    assert room.leaves[0].path == "/prod/leave"
    assert room.leaves[0].cookie == "beekeeper_token=" + TOKEN


def test_polling_saying_left_shows_the_left_state(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting_for_places(12, 300), {"allow": False, "state": "left"})
    page = open_room(new_page, room)
    wait_for_text(page, "full-note", FULL_NOTE)
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "notice-title", "You left the line")
    assert page.get_by_role("link", name="Join the line again").is_visible()
    page.clock.run_for(10 * 60_000)
    assert len(room.polls) == 2
    assert room.leaves == []


def test_phone_width_with_the_full_shop_text_has_no_sideways_scrolling(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting_for_places(123456, 9 * 3600))
    page = open_room(new_page, room, viewport={"width": 320, "height": 640})
    wait_for_text(page, "position", "123,456")
    assert page.evaluate("document.documentElement.scrollWidth") <= 320


@pytest.mark.skipif(not AXE.exists(), reason="axe-core missing: run npm ci")
@pytest.mark.parametrize("accent", ["#1f5fbf", "#ffd400"])
def test_axe_finds_no_serious_problems_full_or_left(
    new_page: Callable[..., Any], accent: str
) -> None:
    with serve(sample_room(accent_colour=accent)) as r:
        r.script(waiting_for_places(12, 300))
        page = open_room(new_page, r)
        wait_for_text(page, "full-note", FULL_NOTE)
        assert serious_violations(page) == []
        page.get_by_role("button", name="Leave the line").click()
        wait_for_text(page, "notice-title", "You left the line")
        assert serious_violations(page) == []
