"""Presence in headless Chromium, against `beekeeper local --demo` in capacity mode: the demo
shop's pages load the room's presence script (with its integrity hash, under the shop's
Content-Security-Policy), three visitors fill a shop of three, one reloads and keeps their
place, one closes their tab and the fourth in line is admitted within the grace plus 5 s.

The room's sessions are 6 s here: a place that outlives them is the heartbeats' doing, not the
demo shop's /client checks."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from beekeeper.core.datamodel import COOKIE_NAME
from tests.support.chromium import CHROMIUM, PageWatch, watch
from tests.support.localroom import visitor as waiting_visitor
from tests.support.localroom.process import LocalProcess, start_local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.minutes(1.1)]

if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("beekeeper.room.producer", reason="needs the admission pipeline's modules")

from beekeeper.local.demo_shop import ADMITTED_TEXT  # noqa: E402 - after the skips above

GRACE = 10
MINUTE_SECONDS = 3


@pytest.fixture
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    args = ["--demo", "--demo-port", "0", "--rate", "60", "--minute-seconds", str(MINUTE_SECONDS)]
    args += ["--max-inside", "3", "--session-minutes", "0.1", "--claim-minutes", "5"]
    args += ["--presence-grace-seconds", str(GRACE)]
    room = start_local(args, tmp_path_factory.mktemp("config"), name="presence-browser")
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


@dataclass
class Visitor:
    context: Any
    page: Any
    seen: PageWatch
    beats: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def polling(room: LocalProcess, visitor: Visitor) -> dict[str, Any]:
    """/polling for the visitor's place in line (the room's cookie in their browser)."""
    (token,) = (
        c["value"]
        for c in visitor.context.cookies(room.urls["page URL"])
        if c["name"] == COOKIE_NAME
    )
    return waiting_visitor.polling(room, token)


@pytest.fixture
def visitor(browser: Any, room: LocalProcess) -> Iterator[Callable[[], Visitor]]:
    contexts: list[Any] = []
    heartbeat = room.urls["page URL"].removesuffix("/room") + "/presence?"

    def arrive() -> Visitor:
        context = browser.new_context()
        contexts.append(context)
        page = context.new_page()
        found = Visitor(context, page, watch(page))

        def heard(response: Any) -> None:
            if response.url.startswith(heartbeat):
                found.beats.append((response.status, response.json()))

        context.on("response", heard)
        page.goto(room.urls["marketing URL"])
        return found

    yield arrive
    for context in contexts:
        context.close()


def in_the_shop(room: LocalProcess, visitor: Visitor) -> None:
    shop = re.compile("^" + re.escape(room.urls["demo shop"]))
    visitor.page.wait_for_url(shop, timeout=MINUTE_SECONDS * 10_000)
    sync_api.expect(visitor.page.locator("#verdict")).to_have_text(ADMITTED_TEXT)
    sync_api.expect(visitor.page.locator("#presence")).to_contain_text(
        f"your place goes to the next in line {GRACE} seconds later"
    )


def test_a_closed_tab_lets_the_next_in_and_a_reload_keeps_its_place(
    room: LocalProcess, visitor: Callable[[], Visitor]
) -> None:
    inside = []
    for _ in range(3):
        inside.append(visitor())
        in_the_shop(room, inside[-1])
    first, second, third = inside
    fourth = visitor()
    sync_api.expect(fourth.page.locator('[data-bk="full-note"]')).to_have_text(
        "The shop is full: people go in as others leave.", timeout=MINUTE_SECONDS * 5_000
    )

    # The second reloads: the page that loads beats again well within the grace.
    beats_before = len(second.beats)
    second.page.reload()
    sync_api.expect(second.page.locator("#verdict")).to_have_text(ADMITTED_TEXT)
    # A grace and five seconds on (and the 6 s sessions long gone), nobody's place has freed:
    # the fourth still waits.
    deadline = time.monotonic() + GRACE + 5
    while time.monotonic() < deadline:
        assert polling(room, fourth).get("allow") is not True, "a place freed: the reload lost it"
        time.sleep(0.5)
    assert len(second.beats) > beats_before
    assert all(status == 200 and body["present"] is True for status, body in second.beats)

    # The first closes their tab without a word.
    closed = time.monotonic()
    first.page.close(run_before_unload=True)
    while polling(room, fourth).get("allow") is not True:
        assert time.monotonic() - closed <= GRACE + 5, "the fourth was not admitted in time"
        time.sleep(0.2)
    admitted_after = time.monotonic() - closed
    # Not before the grace: a reload in it would have kept the place.
    assert admitted_after >= GRACE - 1
    print(f"the fourth was admitted {admitted_after:.1f} s after the tab closed (grace {GRACE} s)")
    in_the_shop(room, fourth)

    # The others still hold their places, and their heartbeats said so throughout.
    for kept in (second, third, fourth):
        sync_api.expect(kept.page.locator("#verdict")).to_have_text(ADMITTED_TEXT)
        assert kept.beats and all(body["present"] is True for _, body in kept.beats)
    # The script loaded under the shop's policy and passed its integrity check: no page
    # reported an error (a CSP or SRI refusal is one).
    for page in [*inside, fourth]:
        assert page.seen.errors == []
