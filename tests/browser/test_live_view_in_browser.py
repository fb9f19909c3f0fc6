"""The live operator view of `beekeeper local` in headless chromium, while visitors go in.

The room runs the real room code with 2 s minutes; visitors join through the marketing link
over HTTP while the page is open, and the view must show them arriving and admitted within a
few refreshes. The page's clock is Playwright's: the test moves it on to fire each refresh
rather than waiting the 3 s between them. Its screenshot shows the time of day, so it changes
every run: it is written to docs/local.md's docs/screenshots/live-view.png only with
BEEKEEPER_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from beekeeper.core.datamodel import QUEUE_VISIBILITY_TIMEOUT_SECONDS
from beekeeper.local.operator_view import REFRESH_SECONDS
from tests.support.chromium import screenshot_path, watch
from tests.support.localroom.http import follow_link
from tests.support.localroom.process import LocalProcess, start_local

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A minute of 2 s: the line builds up and drains within seconds. With 1 s minutes, beside
# three CPU-bound processes, the 60 were not all admitted within a minute: a consumer that a
# starved process runs after its minute's span hands what it received on to the next minute,
# and every such receive counts towards the queue's dead-letter limit.
MINUTE_SECONDS = 2
RATE = 20
VISITORS = 60
# The line drains in VISITORS / RATE room minutes; on a busy machine a visitor a consumer
# held may come back only after the queue's visibility timeout (real seconds, as on AWS).
DRAINED_SECONDS = 60 + QUEUE_VISIBILITY_TIMEOUT_SECONDS
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "live-view.png"

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        ["--demo", "--demo-port", "0", "--rate", str(RATE), "--minute-seconds",
         str(MINUTE_SECONDS), "--join-work", "20"],
        tmp_path_factory.mktemp("config"),
        name="live-view",
    )  # fmt: skip
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def figure(page: Any, name: str) -> int:
    return int(page.locator(f'[data-figure="{name}"]').inner_text().replace(",", ""))


def refresh(page: Any) -> None:
    """Fire the page's next refresh and wait until its fragment is in."""
    stamp = page.locator(".updated").get_attribute("data-updated")
    page.clock.run_for(REFRESH_SECONDS * 1000)
    # Time limits, not waits: a busy machine answers the refresh late.
    deadline = time.monotonic() + 30
    while page.locator(".updated").get_attribute("data-updated") == stamp:
        assert time.monotonic() < deadline, "the view did not refresh"
        time.sleep(0.05)


def refresh_until(
    page: Any, done: Callable[[], bool], seconds: float = 60, why: Callable[[], str] = str
) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"the view did not show it within {seconds} s{why()}"
        time.sleep(0.2)
        refresh(page)


def test_the_view_follows_visitors_in_and_no_visitor_page_can_read_it(
    room: LocalProcess, browser: Any, tmp_path: Path
) -> None:
    view_url = room.urls["operator view"]
    view_origin = "{0.scheme}://{0.netloc}".format(urlsplit(view_url))
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", view_url)
    context = browser.new_context(viewport={"width": 960, "height": 900}, locale="en-GB")
    try:
        page = context.new_page()
        seen = watch(page)
        page.clock.install()
        page.goto(view_url)
        assert page.locator("svg").count() == 2
        before = page.locator("#per-minute-text").inner_text()
        first = VISITORS * 2 // 3
        for _ in range(first):
            assert follow_link(room.urls["marketing URL"]).status == 302
        refresh_until(page, lambda: figure(page, "arrived") == first)
        refresh_until(page, lambda: figure(page, "admitted") > 0)
        first_seen = figure(page, "admitted")
        # More arrive (on a busy machine the first may all be in by now): a later refresh
        # shows more admitted, and the charts follow.
        for _ in range(VISITORS - first):
            assert follow_link(room.urls["marketing URL"]).status == 302
        refresh_until(page, lambda: figure(page, "admitted") > first_seen)
        refresh_until(page, lambda: figure(page, "arrived") == VISITORS)
        # And all of them, a minute's rate at a time: the line builds up and drains. A visitor
        # a starved consumer received but could not admit in its minute (a busy machine) is
        # back on the queue after its visibility timeout, in real seconds as on AWS.
        refresh_until(
            page,
            lambda: figure(page, "admitted") == VISITORS,
            DRAINED_SECONDS,
            lambda: f"; the room said:\n{room.output()[-4000:]}",
        )
        assert figure(page, "waiting") == 0
        after = page.locator("#per-minute-text").inner_text()
        assert after != before and f"{VISITORS} visitors arrived" in after
        assert f"and {VISITORS} were admitted" in after
        drawn = page.evaluate(
            "() => [...document.querySelectorAll('figure.chart svg')].map((svg) =>"
            " [svg.getBoundingClientRect().height, svg.querySelectorAll('path').length])"
        )
        assert len(drawn) == 2 and all(height > 100 and paths > 10 for height, paths in drawn)
        assert seen.errors == []
        assert seen.requests and all(url.startswith(view_origin) for url in seen.requests)
        assert sum(url.endswith("/charts") for url in seen.requests) >= 2  # it refreshed
        page.screenshot(path=str(screenshot_path(SCREENSHOT, tmp_path)), full_page=True)

        # A page of another origin (the demo shop's) may ask, but gets nothing to read.
        shop = context.new_page()
        shop.goto(room.urls["demo shop"])
        read = shop.evaluate(
            "(url) => fetch(url).then((r) => r.text().then((t) => 'read ' + t.length),"
            " () => 'refused')",
            view_url + "charts",
        )
        assert read == "refused"
    finally:
        context.close()
    assert "operator view refused GET /charts" in room.output()
