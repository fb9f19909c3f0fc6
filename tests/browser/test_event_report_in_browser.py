"""The event report opened in headless chromium: every chart drawn, nothing fetched.

The screenshot it takes is the one docs/charts.md and docs/cli.md show
(docs/screenshots/event-report.png, written there with BEEKEEPER_UPDATE_SCREENSHOTS=1): a
simulated event's metrics, written by the real functions, read back as a deployed room's
(tests/support/event_reports.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from beekeeper.charts.event_report import event_report
from tests.support.chromium import DRAWN_CHARTS, screenshot_path, watch
from tests.support.event_reports import spring_sale

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "screenshots" / "event-report.png"


def test_the_event_report_draws_every_chart_without_a_request_or_an_error(
    browser: Any, tmp_path: Path
) -> None:
    room, _ = spring_sale()
    report = tmp_path / "spring-sale.html"
    report.write_text(
        event_report(room.report(), command="beekeeper report spring-sale --out spring-sale.html"),
        encoding="utf-8",
    )
    context = browser.new_context(viewport={"width": 960, "height": 900}, locale="en-GB")
    try:
        page = context.new_page()
        seen = watch(page)
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        charts = page.evaluate(DRAWN_CHARTS)
        assert [c["id"] for c in charts] == [
            "per-minute", "waiting", "waits", "waits-by-minute", "governor", "requests",
        ]  # fmt: skip
        for chart in charts:
            assert chart["width"] > 400 and chart["height"] > 100, chart
            assert chart["shapes"] > 20, chart
            assert len(chart["alternative"]) > 40, chart
            assert chart["rows"] > 0, chart
        assert page.locator("#decisions tbody tr").count() == 6
        assert seen.requests == [report.as_uri()]  # the page itself, and nothing else
        assert seen.errors == []
        page.screenshot(path=str(screenshot_path(SCREENSHOT, tmp_path)), full_page=False)
    finally:
        context.close()
