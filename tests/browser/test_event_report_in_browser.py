"""The event report opened in headless chromium: every chart drawn, nothing fetched.

The screenshot it takes is the one the README and docs/cli.md show
(docs/screenshots/event-report.png): a simulated event's metrics, written by the real
functions, read back as a deployed room's (tests/support/event_reports.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from beekeeper.charts.event_report import event_report
from tests.support.chromium import watch
from tests.support.event_reports import spring_sale

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "screenshots" / "event-report.png"

# Per chart: its size on the page and how many shapes matplotlib drew in it.
DRAWN = """
() => [...document.querySelectorAll("figure.chart")].map((figure) => {
  const svg = figure.querySelector("svg");
  const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
  return {
    id: figure.id,
    width: box.width,
    height: box.height,
    shapes: svg ? svg.querySelectorAll("path, use, text").length : 0,
    alternative: figure.querySelector("figcaption")?.textContent ?? "",
    rows: figure.querySelectorAll("table tbody tr").length,
  };
})
"""


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
        charts = page.evaluate(DRAWN)
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
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=False)
    finally:
        context.close()
