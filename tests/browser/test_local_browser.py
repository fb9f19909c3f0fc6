"""A visitor's whole journey in headless Chromium, against `beekeeper local --demo`.

Debian's chromium (/usr/bin/chromium, installed by .ci/run) driven by PyPI's playwright; the
room runs the real room code with 3 s minutes. The visitor joins just after a minute started
(the trigger already planned it), so they wait in line for most of a minute, see their position
and wait, and are admitted by the next minute's consumer.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.localroom.process import LocalProcess, start_local

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MINUTE_SECONDS = 3

if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
# The room's real code: the admission pipeline's Lambdas (issue 3) must be installed.
pytest.importorskip("beekeeper.lambdas.producer", reason="needs the admission pipeline's modules")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        ["--demo", "--demo-port", "0", "--rate", "1", "--minute-seconds", str(MINUTE_SECONDS)],
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
    # Just after the start of a (3 s) minute, someone else takes its one slot (1 a minute):
    # our visitor waits for the next minute's.
    now = time.time()
    time.sleep((now // MINUTE_SECONDS + 1) * MINUTE_SECONDS + 0.4 - now)
    with urllib.request.urlopen(room.urls["marketing URL"]) as first:  # noqa: S310 - loopback
        assert first.status == 200
    page = context.new_page()  # type: ignore[attr-defined]
    page.goto(room.urls["marketing URL"])
    assert page.url == room.urls["page URL"]
    body = page.locator("body")
    # Alone in line the page says "You are next in line"; behind others "number N in line".
    sync_api.expect(body).to_contain_text(
        re.compile(r"(number \d+|next) in line", re.IGNORECASE), timeout=10_000
    )
    sync_api.expect(body).to_contain_text(
        re.compile(r"estimated wait", re.IGNORECASE), timeout=10_000
    )
    shop_prefix = room.urls["demo shop"]
    page.wait_for_url(re.compile("^" + re.escape(shop_prefix)), timeout=MINUTE_SECONDS * 10_000)
    sync_api.expect(page.locator("#verdict")).to_have_text("You're in")
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
