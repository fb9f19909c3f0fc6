"""Headless Debian chromium driven by Playwright, against the loopback polling double.

The page's clock is Playwright's fake clock: a test moves time on with `page.clock.run_for`,
so a poll 20 s away, a back-off or a minute between announcements take no real time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, watch

# Noon UTC, so the page's clock times can be asserted exactly (en-GB: a 24-hour clock).
START = datetime(2026, 9, 21, 12, 0, 0, tzinfo=UTC)

if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) "
        "to run the browser tests; .ci/run does",
        allow_module_level=True,
    )

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package (test extras) is not installed"
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def playwright() -> Iterator[Any]:
    """The one Playwright of the session: the sync API allows only one at a time."""
    with sync_api.sync_playwright() as started:
        yield started


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    launched = playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """Opens a page with the fake clock installed at START (with `paused=True`, standing there
    until the test moves it); closes every context after."""
    contexts: list[Any] = []

    def open_page(*, paused: bool = False, **context_options: Any) -> Any:
        options = {"locale": "en-GB", "timezone_id": "UTC", **context_options}
        context = browser.new_context(**options)
        contexts.append(context)
        page = context.new_page()
        if paused:
            # The page's time stands at START until the test moves it (run_for): the real
            # seconds a busy machine takes never reach the page. pause_at only moves forward.
            page.clock.install(time=START - timedelta(minutes=1))
            page.clock.pause_at(START)
        else:
            page.clock.install(time=START)
        page.errors = watch(page).errors
        return page

    yield open_page
    for context in contexts:
        context.close()
