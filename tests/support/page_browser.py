"""Helpers of the page's browser tests (tests/browser): open the page on the polling double,
read a hook's text, wait for what the page shows or asks."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.polling_double import PollingDouble

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# Longest wait to the next poll for poll_after=20 (25% jitter) plus a little.
NEXT_POLL_MS = 25_500


def text(page: Any, hook: str) -> str:
    return str(page.locator(f'[data-bk="{hook}"]').text_content()).strip()


def open_room(new_page: Callable[..., Any], room: PollingDouble, **options: Any) -> Any:
    page = new_page(**options)
    page.goto(room.url("/room"))
    return page


def wait_for_polls(room: PollingDouble, count: int) -> None:
    """Real time: the fake clock fired the timer, the request is on its way to the double."""
    wait_for_requests(room.polls, count)


def wait_for_requests(requests: list[Any], count: int) -> None:
    """Real time: until the double has recorded `count` requests (polls, a beacon's leave)."""
    deadline = time.monotonic() + 5
    while len(requests) < count:
        assert time.monotonic() < deadline, f"{len(requests)} requests, expected {count}"
        time.sleep(0.02)


def wait_for_text(page: Any, hook: str, expected: str) -> None:
    page.locator(f'[data-bk="{hook}"]').filter(has_text=expected).wait_for(timeout=5_000)


def serious_violations(page: Any) -> list[str]:
    """What axe-core finds serious or critical on the page as it is now."""
    page.clock.resume()  # axe-core waits on timers: a paused page's clock runs from here on
    page.evaluate(AXE.read_text(encoding="utf-8"))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
