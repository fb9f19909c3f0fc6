"""A scheduled event's pre-queue in headless chromium, against the polling double: the live
countdown in the visitor's own time zone, moved on with Playwright's fake clock, the draw
promised, and the first poll after the start coming within the spread, not before it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.browser.conftest import START
from tests.support.page_browser import (
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

STARTS_AT = int(START.timestamp()) + 90  # 12:01:30 UTC


def prequeue(poll_after: int) -> dict[str, object]:
    return {"allow": False, "state": "prequeue", "starts_at": STARTS_AT, "poll_after": poll_after}


@pytest.fixture
def room() -> Iterator[PollingDouble]:
    with serve(sample_room()) as double:
        yield double


def test_the_countdown_runs_live_and_the_first_poll_after_the_start_is_spread(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(prequeue(60), prequeue(30), waiting(40, 240))
    page = open_room(new_page, room, paused=True)
    wait_for_text(page, "position", "Starts in 00:01:30")
    assert "12:01" in text(page, "wait")  # the start, in the visitor's zone (UTC here)
    assert "random order, drawn at the start" in text(page, "wait-note")
    page.clock.run_for(10_000)
    wait_for_text(page, "position", "Starts in 00:01:20")
    # The second poll at least the server's 60 s after the first, with its jitter (up to 75 s;
    # the first comes after the page's first look at the shared state, which this double
    # does not serve: up to a second after the countdown first shows 01:30).
    page.clock.run_for(50_000 + 15_000 + 2_000)
    wait_for_polls(room, 2)
    # Its answer is in: the page's time stands still until the test moves it, so the third
    # poll is timed from this answer, however late a busy machine delivers it.
    checked = page.locator('[data-bk="checked"]')
    checked.filter(has_text=re.compile(r"Last checked at 12:01:")).wait_for(timeout=5_000)
    # The third comes after the start, within the spread of 8 s, never before it.
    polls = len(room.polls)
    page.clock.run_for(90_000 - 77_000 - 1_000)
    assert len(room.polls) == polls  # not before the start
    page.clock.run_for(1_000 + 8_000 + 500)
    wait_for_polls(room, 3)
    wait_for_text(page, "position", "You are number 40 in line.")
    assert serious_violations(page) == []
    assert page.errors == []


def test_the_start_is_shown_in_the_visitors_own_time_zone_in_german(
    new_page: Callable[..., Any], room: PollingDouble
) -> None:
    room.script(prequeue(60))
    # The countdown reads to the second: on a page whose time stands still, as above.
    page = open_room(new_page, room, paused=True, locale="de-DE", timezone_id="Europe/Berlin")
    wait_for_text(page, "position", "Beginn in 00:01:30")
    assert "14:01" in text(page, "wait")  # 12:01:30 UTC is 14:01 in Berlin in September
    assert "ausgelost" in text(page, "wait-note")
