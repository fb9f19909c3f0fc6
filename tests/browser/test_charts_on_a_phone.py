"""The charts on a phone's 360 px: every text a chart draws is rendered at 12 px or more (the
chart scrolls sideways in its own box instead of shrinking), and the page itself does not
scroll sideways. Checked on the simulation report, the event report and the live view, which
share the charts' page style (charts/figures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from beekeeper.charts.event_report import event_report
from beekeeper.charts.figures import READABLE_TEXT_PX
from beekeeper.cli.main import cli
from beekeeper.local.live_counters import LiveCounters, Reading
from beekeeper.local.operator_view import OperatorView
from tests.support.event_reports import spring_sale

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 360, "height": 740}
# Each chart's texts as drawn: its font size times the scale the SVG is shown at (the length of
# the transform's first column, so a rotated axis label counts too).
RENDERED_TEXT = """
() => [...document.querySelectorAll("figure.chart svg text")].map((text) => {
  const matrix = text.getScreenCTM();
  const scale = Math.hypot(matrix.a, matrix.b);
  return {
    chart: text.closest("figure").id,
    text: text.textContent,
    px: parseFloat(getComputedStyle(text).fontSize) * scale,
  };
})
"""
PAGE_WIDTH = "() => document.scrollingElement.scrollWidth"


def simulation_report(tmp_path: Path) -> str:
    report = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli,
        ["simulate", "--rate", "600", "--visitors", "3000", "--arrival", "uniform:3",
         "--minutes", "8", "--report", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return report.read_text(encoding="utf-8")


def the_event_report(tmp_path: Path) -> str:
    room, _ = spring_sale()
    return event_report(room.report(), command="beekeeper report spring-sale --out r.html")


def the_live_view(tmp_path: Path) -> str:
    counters = LiveCounters(60.0, sample_seconds=10)
    start = 1_800_000_000.0
    for i in range(30):
        counters.add(Reading(at=start + 10 * i, arrivals=40 * i, admitted=25 * i, rate=150))
    return OperatorView(room="sale", counters=counters, clock=lambda: start + 295).page()


@pytest.mark.parametrize("document", [simulation_report, the_event_report, the_live_view])
def test_every_chart_text_is_readable_at_360_px(
    browser: Any, tmp_path: Path, document: Any
) -> None:
    path = tmp_path / "page.html"
    path.write_text(document(tmp_path), encoding="utf-8")
    context = browser.new_context(viewport=PHONE, locale="en-GB")
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        texts = page.evaluate(RENDERED_TEXT)
        assert len(texts) > 20
        smallest = min(texts, key=lambda text: text["px"])
        assert smallest["px"] >= READABLE_TEXT_PX, smallest
        # The charts scroll in their own boxes: the page is as wide as the phone.
        assert page.evaluate(PAGE_WIDTH) <= PHONE["width"]
    finally:
        context.close()
