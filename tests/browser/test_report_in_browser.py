"""The simulation report opened in headless chromium: every chart drawn, nothing fetched.

The screenshot it takes is the one docs/charts.md shows (docs/screenshots/report.png, written
there with BEEKEEPER_UPDATE_SCREENSHOTS=1): the same simulation always draws the same page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from beekeeper.cli.main import cli
from tests.support.chromium import DRAWN_CHARTS, screenshot_path, watch

# Each test drives a headless chromium: the full gate's (slow).
pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "screenshots" / "report.png"
# Twice the rate arrives for six minutes: the line grows, then drains; every fault strikes.
SIMULATION = [
    "simulate", "--rate", "1000", "--visitors", "12000", "--arrival", "uniform:6",
    "--minutes", "14", "--faults", "crash,throttle,duplicates,double-trigger", "--seed", "7",
]  # fmt: skip


def test_the_report_draws_every_chart_without_a_request_or_an_error(
    browser: Any, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    result = CliRunner().invoke(cli, [*SIMULATION, "--report", str(report)])
    assert result.exit_code == 0, result.output
    context = browser.new_context(viewport={"width": 960, "height": 900}, locale="en-GB")
    try:
        page = context.new_page()
        seen = watch(page)
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        charts = page.evaluate(DRAWN_CHARTS)
        assert [c["id"] for c in charts] == ["per-minute", "waiting", "waits", "faults"]
        for chart in charts:
            assert chart["width"] > 400 and chart["height"] > 100, chart
            assert chart["shapes"] > 20, chart
            assert len(chart["alternative"]) > 40, chart
        assert seen.requests == [report.as_uri()]  # the page itself, and nothing else
        assert seen.errors == []
        page.screenshot(path=str(screenshot_path(SCREENSHOT, tmp_path)), full_page=True)
    finally:
        context.close()
