"""A visitor's whole journey in headless Chromium, against `beekeeper local --demo`.

Debian's chromium (/usr/bin/chromium, installed by .ci/run) driven by PyPI's playwright; the
room runs the real room code with 3 s minutes. The visitor joins just after a minute started
(the trigger already planned it), so they wait in line for most of a minute, see their position
and wait, and are admitted by the next minute's consumer. In capacity mode (`--max-inside 1`)
the admission goes through the room's /enter, and a visitor waiting for the full shop leaves
the line with the page's button.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core.serving import DISPLAY_DELAY_SECONDS, DOCUMENT_EVERY_SECONDS
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, REACHES_MS
from tests.support.localroom.http import follow_link
from tests.support.localroom.process import LocalProcess, start_local, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MINUTE_SECONDS = 3
# Visitors who join before the journey's own, at 1 a minute: the page has several minutes to
# show its place before the admission comes.
AHEAD = 4
# The work a place costs, kept small: the others' places come faster than the room admits
# them (one a minute) however busy this machine is; the journey still goes through the work
# page.
JOIN_WORK_MS = 20

if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
# The room's real code: the admission pipeline's Lambdas (issue 3) must be installed.
pytest.importorskip("beekeeper.room.producer", reason="needs the admission pipeline's modules")

from beekeeper.local.demo_shop import ADMITTED_TEXT  # noqa: E402 - after the skips above


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        [
            *("--demo", "--demo-port", "0", "--rate", "1"),
            *("--minute-seconds", str(MINUTE_SECONDS), "--join-work", str(JOIN_WORK_MS)),
        ],
        tmp_path_factory.mktemp("config"),
        name="browser-test",
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def journey(room: LocalProcess, context: object) -> None:
    """Marketing link -> waiting room page (position, wait) -> admitted -> demo shop says in."""
    # Others join first (one admitted a minute): our visitor waits AHEAD minutes or so behind
    # them, however slowly this machine solves the work and draws the page meanwhile.
    for _ in range(AHEAD):
        assert follow_link(room.urls["marketing URL"]).status == 302  # another visitor's place
    page = context.new_page()  # type: ignore[attr-defined]
    # The link sends the new visitor to the work page first; it solves its challenge and comes
    # back for the place.
    page.goto(room.urls["marketing URL"])
    # The page, with the visitor's turn in the fragment (the cookie is HttpOnly).
    page.wait_for_url(re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000)
    body = page.locator("body")
    # Alone in line the page says "You are next in line"; behind others "number N in line".
    # A shared state published before the visitor joined shows no place yet ("finding your
    # place"): the page fetches it again, and the place shows once a newer one reaches it.
    sync_api.expect(body).to_contain_text(
        re.compile(r"(number \d+|next) in line", re.IGNORECASE), timeout=REACHES_MS
    )
    sync_api.expect(body).to_contain_text(
        re.compile(r"estimated wait", re.IGNORECASE), timeout=REACHES_MS
    )
    shop_prefix = room.urls["demo shop"]
    page.wait_for_url(
        re.compile("^" + re.escape(shop_prefix)), timeout=(AHEAD + 1) * MINUTE_SECONDS * 10_000
    )
    sync_api.expect(page.locator("#verdict")).to_have_text(ADMITTED_TEXT)
    # The shop verified the ticket offline, then sent the visitor on without it in the URL.
    sync_api.expect(page.locator("#how")).to_contain_text("verified your admission ticket offline")
    assert "beekeeper_" not in page.url
    page.close()


def test_a_visitor_waits_is_admitted_and_the_shop_confirms_and_a_line_skipper_is_refused(
    room: LocalProcess, playwright: object
) -> None:
    browser = playwright.chromium.launch(  # type: ignore[attr-defined]
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    try:
        journey(room, browser.new_context())
        skipper = browser.new_context().new_page()
        skipper.goto(room.urls["demo shop"])
        sync_api.expect(skipper.locator("#verdict")).to_have_text("You skipped the line")
    finally:
        browser.close()


def test_the_journey_works_with_third_party_cookies_blocked(
    room: LocalProcess, playwright: object, tmp_path: Path
) -> None:
    # Chromium's own setting ("Block third-party cookies"), as a visitor would switch it on.
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(
        json.dumps({"profile": {"block_third_party_cookies": True, "cookie_controls_mode": 1}})
    )
    context = playwright.chromium.launch_persistent_context(  # type: ignore[attr-defined]
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=[*CHROMIUM_ARGS, "--test-third-party-cookie-phaseout"],
    )
    try:
        journey(room, context)
    finally:
        context.close()


# Capacity mode: one place in the shop. Sessions and claims are real minutes, long enough here
# that nobody's place frees during the test. One test uses it: it stops after that test.
@pytest.fixture
def capacity_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    args = ["--demo", "--demo-port", "0", "--rate", "60", "--minute-seconds", str(MINUTE_SECONDS)]
    args += ["--max-inside", "1", "--session-minutes", "5", "--claim-minutes", "5"]
    room = start_local(args, tmp_path_factory.mktemp("config"), name="capacity-browser")
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


@pytest.fixture
def new_context(browser: Any) -> Iterator[Callable[[], Any]]:
    """A fresh browser context (a visitor of their own); all closed after the test."""
    contexts: list[Any] = []

    def open_context() -> Any:
        contexts.append(browser.new_context())
        return contexts[-1]

    yield open_context
    for context in contexts:
        context.close()


def poll_as(room: LocalProcess, context: Any) -> dict[str, Any]:
    """/polling with the browser context's room cookie, as the page would ask."""
    cookies = context.cookies(room.urls["page URL"])
    header = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
    url = room.urls["page URL"].removesuffix("/room") + "/polling"
    request = urllib.request.Request(url, headers={"Cookie": header})  # noqa: S310 - loopback
    with urllib.request.urlopen(request) as answer:  # noqa: S310 - loopback
        body: dict[str, Any] = json.loads(answer.read())
    return body


def test_capacity_mode_admits_through_enter_then_a_full_shop_then_leaving_the_line(
    capacity_room: LocalProcess, new_context: Callable[[], Any]
) -> None:
    """The first visitor goes through the room's /enter into the shop; the shop is then full:
    the next visitor sees why they wait, leaves with the button, and the room knows it."""
    room = capacity_room
    room_base = room.urls["page URL"].removesuffix("/room")
    shop_prefix = room.urls["demo shop"]

    first = new_context()
    entered: list[tuple[int, str]] = []

    def record_enter(response: Any) -> None:
        if response.url == room_base + "/enter":
            entered.append((response.status, response.headers.get("location", "")))

    first.on("response", record_enter)
    page = first.new_page()
    page.goto(room.urls["marketing URL"])
    page.wait_for_url(
        re.compile("^" + re.escape(shop_prefix)), timeout=(AHEAD + 1) * MINUTE_SECONDS * 10_000
    )
    # The page went to the shop through the room's /enter, which answered with a redirect
    # carrying the token and the ticket; the shop verified the ticket offline and sent the
    # visitor on without either in the URL.
    sync_api.expect(page.locator("#verdict")).to_have_text(ADMITTED_TEXT)
    sync_api.expect(page.locator("#how")).to_contain_text("verified your admission ticket offline")
    assert "beekeeper_" not in page.url
    assert len(entered) == 1
    status, location = entered[0]
    assert status == 302
    assert location.startswith(shop_prefix)
    assert "beekeeper_token=" in location and "beekeeper_ticket=" in location

    # The one place is taken: the next visitor waits for someone to leave.
    second = new_context()
    waiting = second.new_page()
    waiting.goto(room.urls["marketing URL"])
    waiting.wait_for_url(
        re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000
    )
    sync_api.expect(waiting.locator('[data-bk="full-note"]')).to_have_text(
        "The shop is full: people go in as others leave.", timeout=MINUTE_SECONDS * 5_000
    )
    # The place every page shows comes from the state a few seconds back (a 3 s minute's
    # lattice moves fast meanwhile): it settles within the display delay and a document's
    # interval (twice that on a busy machine).
    sync_api.expect(waiting.locator('[data-bk="position"]')).to_have_text(
        re.compile(r"^You are (number \d+|next) in line\.$"),
        timeout=2 * (DISPLAY_DELAY_SECONDS + DOCUMENT_EVERY_SECONDS) * 1000,
    )
    sync_api.expect(waiting.locator('[data-bk="wait"]')).to_contain_text("Estimated wait:")
    answer = poll_as(room, second)
    assert answer["state"] == "waiting"
    assert (answer["max_inside"], answer["inside"], answer["full"]) == (1, 1, True)

    waiting.get_by_role("button", name="Leave the line").click()
    sync_api.expect(waiting.locator('[data-bk="notice-title"]')).to_have_text("You left the line")
    link = waiting.get_by_role("link", name="Join the line again")
    assert link.get_attribute("href") == room.urls["marketing URL"]
    # The beacon reached the room: the visitor's place is gone for good.
    left = wait_until(lambda: poll_as(room, second).get("state") == "left", timeout=5)
    assert left, poll_as(room, second)
    assert poll_as(room, second) == {"allow": False, "state": "left"}
    # Reloading the page shows the same state (the room says so, the page did not remember).
    waiting.reload()
    sync_api.expect(waiting.locator('[data-bk="notice-title"]')).to_have_text("You left the line")
