"""The waiting room page in headless chromium: what it shows, says, and where it sends visitors."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.page_browser import (
    AXE,
    NEXT_POLL_MS,
    open_room,
    serious_violations,
    text,
    wait_for_polls,
    wait_for_text,
)
from tests.support.polling_double import PollingDouble, serve, waiting
from tests.support.sample_room import sample_room

# Each test drives a headless chromium: the full gate's (slow).
pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def room() -> Iterator[PollingDouble]:
    with serve(sample_room()) as double:
        yield double


def test_waiting_visitor_sees_name_position_wait_and_check_times(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(1234, 750))
    # The page's clock stands at START: the times it shows are the first answer's, not moved
    # on by the real second a busy machine can take to answer.
    page = open_room(new_page, room, paused=True)
    wait_for_text(page, "position", "You are number 1,234 in line.")
    assert page.locator("h1").text_content() == "Spring Sale"
    assert page.title() == "Spring Sale"
    assert text(page, "wait") == "Estimated wait: about 15 minutes"
    checked = text(page, "checked")
    assert re.fullmatch(r"Last checked at 12:00:00\. Next check at 12:00:(2[0-5])\.", checked)
    assert "Reloading this page keeps your place in line." in text(page, "waiting")
    progress = page.get_by_role("progressbar", name="Progress through the line")
    assert progress.get_attribute("aria-valuenow") == "0"
    assert page.locator('[data-bk="wait-note"]').is_hidden()
    assert page.errors == []


def test_position_falls_and_progress_grows_with_each_poll(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(101, 600), waiting(51, 300))
    page = open_room(new_page, room)
    wait_for_text(page, "position", "You are number 101 in line.")
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "position", "You are number 51 in line.")
    progress = page.get_by_role("progressbar")
    assert progress.get_attribute("aria-valuenow") == "50"
    assert progress.get_attribute("aria-valuetext") == "50% of the way"
    assert len(room.polls) == 2


def test_live_region_announces_politely_without_repeating_every_poll(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(
        waiting(500, 3000),
        waiting(480, 2880),
        waiting(470, 2820),
        waiting(400, 2400),
        waiting(1, 20),
    )
    # The page's clock moves only as the test moves it: "within a minute" of the first
    # announcement is the page's minute, not the real seconds a busy machine adds.
    page = open_room(new_page, room, paused=True)
    status = page.get_by_role("status")
    assert status.get_attribute("aria-live") == "polite"
    wait_for_text(page, "status", "You are number 500 in line. Estimated wait: about 50 minutes.")
    # The next two polls (within a minute) change the visible text; the live region stays quiet.
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "position", "You are number 480 in line.")
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "position", "You are number 470 in line.")
    assert text(page, "status").startswith("You are number 500 in line.")
    # Over a minute after the first announcement, a line that moved a tenth is worth saying.
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "status", "You are number 400 in line. Estimated wait: about 40 minutes.")
    # Reaching the front is said at once.
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "status", "You are next in line. Estimated wait:")
    assert text(page, "position") == "You are next in line."
    assert len(room.polls) == 5


def test_under_a_stage_prefix_every_url_stays_under_it(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(5, 60), {"allow": False, "state": "unknown"})
    page = new_page()
    page.goto(room.url("/prod/room"))
    wait_for_text(page, "position", "You are number 5 in line.")
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "notice-title", "We could not find your place in line")
    assert room.poll_paths == ["/prod/polling", "/prod/polling"]
    link = page.get_by_role("link", name="Join the line")
    assert link.get_attribute("href") == room.url("/prod/beekeeper")


def test_german_browser_gets_german_page(new_page: Callable[..., Any], room: PollingDouble) -> None:
    room.script(waiting(1234, 75 * 60))
    page = open_room(new_page, room, locale="de-DE")
    wait_for_text(page, "position", "Sie sind Nummer 1.234 in der Warteschlange.")
    assert page.locator("html").get_attribute("lang") == "de"
    assert text(page, "wait") == "Geschätzte Wartezeit: etwa 1 Stunde und 15 Minuten"
    assert "Wenn Sie die Seite neu laden, behalten Sie Ihren Platz." in text(page, "waiting")


def test_admitted_visitor_is_sent_to_the_shop_at_once(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    shop = room.url("/shop?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.7")
    room.script(waiting(2, 30), {"allow": True, "origin": shop})
    page = open_room(new_page, room)
    wait_for_text(page, "position", "You are number 2 in line.")
    page.clock.run_for(NEXT_POLL_MS)
    page.wait_for_url(shop, timeout=5_000)
    assert page.locator("h1").text_content() == "The shop"


def test_switched_off_room_lets_the_visitor_in_with_a_ticket(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    """Off, the room lets the line in: the page says so and asks again in a moment, until its
    admission (with its ticket) comes; it never sends the visitor round the marketing link,
    which would put them back in line."""
    shop = room.url("/shop?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.7&beekeeper_ticket=x.y.z")
    room.script(
        {"allow": False, "state": "room_off", "poll_after": 5},
        {"allow": True, "origin": shop},
    )
    page = open_room(new_page, room)
    wait_for_text(page, "notice-title", "The line is open")
    page.clock.run_for(NEXT_POLL_MS)
    page.wait_for_url(shop, timeout=5_000)


@pytest.mark.parametrize(
    ("state", "title"),
    [
        ("no_token", "We could not find your place in line"),
        ("malformed", "We could not read your place in line"),
        ("unknown", "We could not find your place in line"),
        ("expired", "Your entry has expired"),
    ],
)
def test_lost_places_are_explained_with_a_link_back(
    new_page: Callable[..., Any], room: PollingDouble, state: str, title: str
) -> None:
    room.script({"allow": False, "state": state})
    page = open_room(new_page, room)
    wait_for_text(page, "notice-title", title)
    assert page.locator('[data-bk="waiting"]').is_hidden()
    assert text(page, "notice-text")
    link = page.get_by_role("link", name="Join the line")
    assert link.get_attribute("href") == room.url("/beekeeper")
    wait_for_text(page, "status", title)
    # The page stops asking: nothing more will change for this visitor.
    page.clock.run_for(120_000)
    assert len(room.polls) == 1
    # The link is reachable from the keyboard and follows.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Join the line"
    page.keyboard.press("Enter")
    page.wait_for_url(room.url("/beekeeper"), timeout=5_000)


def test_failures_say_retrying_back_off_and_recover(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(503, 500, waiting(40, 240))
    page = open_room(new_page, room)
    wait_for_text(page, "retry", "We could not reach the waiting room just now.")
    assert "Your place is kept." in text(page, "retry")
    assert re.search(r"Trying again at 12:00:0[12]\.", text(page, "retry"))
    wait_for_text(page, "status", "We could not reach the waiting room just now.")
    page.clock.run_for(2_100)  # first back-off: 1 to 2 s
    wait_for_polls(room, 2)
    assert len(room.polls) == 2
    page.clock.run_for(4_100)  # second back-off: 2 to 4 s
    wait_for_text(page, "position", "You are number 40 in line.")
    assert page.locator('[data-bk="retry"]').is_hidden()
    assert len(room.polls) == 3


def test_a_rise_in_the_wait_is_explained(new_page: Callable[..., Any], room: PollingDouble) -> None:
    room.script(waiting(300, 600), waiting(290, 1500, slowed=True), waiting(280, 1480, slowed=True))
    page = open_room(new_page, room, paused=True)
    wait_for_text(page, "wait", "about 10 minutes")
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "position", "You are number 290 in line.")
    # One high figure could be noise: the countdown goes on, and the slowdown is mentioned.
    assert text(page, "wait") == "Estimated wait: about 10 minutes"
    assert text(page, "wait-note").startswith("The shop has slowed entry")
    page.clock.run_for(NEXT_POLL_MS)
    wait_for_text(page, "wait", "about 25 minutes")
    assert text(page, "wait-note").startswith(
        "Your wait is longer than before because the shop slowed entry"
    )


def test_polls_send_the_cookie_and_follow_poll_after(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(10, 60, poll_after=5))
    page = new_page(paused=True)
    page.context.add_cookies(
        [{"name": "beekeeper_token", "value": "A" * 22 + ".10", "url": room.url("/")}]
    )
    page.goto(room.url("/room"))
    wait_for_text(page, "position", "You are number 10 in line.")
    page.clock.run_for(4_900)
    assert len(room.polls) == 1, "never sooner than poll_after"
    page.clock.run_for(1_400)
    wait_for_polls(room, 2)
    page.locator('[data-bk="checked"]').filter(has_text=re.compile(r"at 12:00:0[5-7]\.")).wait_for()
    assert len(room.polls) == 2
    assert room.polls[0] == "beekeeper_token=" + "A" * 22 + ".10"


def test_phone_width_has_no_sideways_scrolling(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(123456, 9 * 3600))
    with serve(sample_room(display_name="The Extraordinarily Long Spring Sale Name 2026")) as r:
        r.script(waiting(123456, 9 * 3600))
        page = open_room(new_page, r, viewport={"width": 360, "height": 740})
        wait_for_text(page, "position", "123,456")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_reduced_motion_turns_off_the_progress_animation(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(waiting(10, 60))
    duration = (
        "getComputedStyle(document.querySelector('[data-bk=progress-fill]')).transitionDuration"
    )
    moving = open_room(new_page, room)
    wait_for_text(moving, "position", "10")
    assert moving.evaluate(duration) != "0s"
    still = open_room(new_page, room, reduced_motion="reduce")
    wait_for_text(still, "position", "10")
    assert still.evaluate(duration) == "0s"


@pytest.mark.skipif(not AXE.exists(), reason="axe-core missing: run npm ci")
@pytest.mark.parametrize("accent", ["#1f5fbf", "#ffd400"])
def test_axe_finds_no_serious_problems(new_page: Callable[..., Any], accent: str) -> None:
    settings = sample_room(accent_colour=accent)
    with serve(settings) as r:
        r.script(waiting(42, 600, slowed=True))
        page = open_room(new_page, r)
        wait_for_text(page, "position", "You are number 42 in line.")
        assert serious_violations(page) == []
        r.script({"allow": False, "state": "expired"})
        page.clock.run_for(NEXT_POLL_MS)
        wait_for_text(page, "notice-title", "Your entry has expired")
        assert serious_violations(page) == []


def test_without_javascript_the_page_says_what_to_do(browser: Any, room: PollingDouble) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(room.url("/room"))
        assert "This waiting room needs JavaScript" in str(page.locator("noscript").inner_text())
        assert page.locator("h1").text_content() == "Spring Sale"
    finally:
        context.close()


MINIMAL_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">{{SECURITY_POLICY}}
<title>{{DISPLAY_NAME}} | Acme</title>
<style>body { font-family: serif; background: #fff; color: #111; }</style></head>
<body><main><h1>Acme: {{DISPLAY_NAME}}</h1>
<div data-bk="waiting"><p data-bk="position"></p><p data-bk="wait"></p>
<p data-bk-text="keepPlace"></p></div>
<div data-bk="notice" hidden><h2 data-bk="notice-title"></h2><p data-bk="notice-text"></p>
<a data-bk="notice-link" href="beekeeper"></a></div>
<div data-bk="status"></div></main>
{{ROOM_CONFIG}}{{PAGE_SCRIPT}}</body></html>
"""


def test_custom_template_with_only_the_required_hooks_works(
    new_page: Callable[..., Any], tmp_path: Path
) -> None:
    template = tmp_path / "acme.html"
    template.write_text(MINIMAL_TEMPLATE, encoding="utf-8")
    with serve(sample_room(custom_template=str(template))) as r:
        r.script(waiting(7, 120))
        page = open_room(new_page, r)
        wait_for_text(page, "position", "You are number 7 in line.")
        assert page.locator("h1").text_content() == "Acme: Spring Sale"
        assert text(page, "wait") == "Estimated wait: about 2 minutes"
        assert "Reloading this page keeps your place" in text(page, "waiting")
        # The script makes the status hook a polite live region even when the template did not.
        assert page.get_by_role("status").get_attribute("aria-live") == "polite"
        wait_for_text(page, "status", "You are number 7 in line.")
        # The template's own <style> is allowed by the policy; nothing was blocked.
        assert page.evaluate("getComputedStyle(document.body).fontFamily") == "serif"
        assert page.errors == []
