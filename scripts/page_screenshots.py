"""Screenshots of the waiting room page for the README: phone (360x740) and desktop (1280x800).

Run from the repository: `.venv/bin/python scripts/page_screenshots.py` (needs Debian's
/usr/bin/chromium). It serves the page from the browser tests' loopback polling double with a
scripted answer, fixes the page's clock, and writes PNGs to docs/screenshots/.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the tests' helpers are the package `tests.support`

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.polling_double import Answer, serve, waiting, waiting_for_places  # noqa: E402
from tests.support.sample_room import sample_room  # noqa: E402

OUT = REPO / "docs" / "screenshots"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
SHOTS: list[tuple[str, dict[str, int], str, Answer]] = [
    ("room-phone.png", PHONE, "en-GB", waiting(1234, 750, slowed=True)),
    ("room-desktop.png", DESKTOP, "en-GB", waiting(1234, 750, slowed=True)),
    ("room-desktop-de.png", DESKTOP, "de-DE", waiting(87, 95)),
    ("room-expired-phone.png", PHONE, "en-GB", {"allow": False, "state": "expired"}),
    # Capacity mode: the shop is full, visitors go in as others leave.
    ("room-full-phone.png", PHONE, "en-GB", waiting_for_places(212, 1500, turnover=9)),
]


def shoot(
    browser: Any,
    base_url: str,
    double: Any,
    name: str,
    viewport: dict[str, int],
    locale: str,
    answer: Answer,
) -> Path:
    # A first answer an earlier poll gave, so the progress bar has moved; a capacity-mode
    # room's answers carry its figures from the start.
    first = (
        waiting_for_places(260, 1800)
        if isinstance(answer, dict) and "max_inside" in answer
        else waiting(2468, 1500)
    )
    double.script(first, answer)
    context = browser.new_context(viewport=viewport, locale=locale, timezone_id="UTC")
    try:
        page = context.new_page()
        page.clock.install(time=datetime(2026, 9, 21, 12, 0, 0, tzinfo=UTC))
        page.emulate_media(reduced_motion="reduce")
        page.goto(base_url + "/room")
        page.wait_for_selector('[data-bk="checked"]:not(:empty)')
        page.clock.run_for(26_000)
        page.wait_for_selector('[data-bk="status"]:not(:empty)', state="attached")
        page.wait_for_timeout(200)
        path = OUT / name
        page.screenshot(path=str(path), full_page=False)
        return path
    finally:
        context.close()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    settings = sample_room(display_name="Spring Sale 2026")
    with serve(settings) as double, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            for name, viewport, locale, answer in SHOTS:
                path = shoot(browser, double.base_url, double, name, viewport, locale, answer)
                print(f"{path.relative_to(REPO)}: {path.stat().st_size:,} bytes")
        finally:
            browser.close()


if __name__ == "__main__":
    main()
