"""matplotlib's news of its font cache stays out of the log of whatever draws a chart: a local
room's log (INFO and up, as `beekeeper local` configures it) shows the room, not "generated new
fontManager". A process of its own with an empty matplotlib cache, so the cache is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DRAW = """
import logging
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
from beekeeper.charts import svg
svg.render_svg(
    "a test", lambda axes: axes.plot([0, 1], [1, 2]), size=(4.0, 2.0), chart_id="c",
    title="t", described_by="d",
)
logging.getLogger("beekeeper.local").info("the room's own line")
"""


def test_building_the_font_cache_says_nothing_in_the_log(tmp_path: Path) -> None:
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "empty-cache")}
    done = subprocess.run(
        [sys.executable, "-c", DRAW], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    # The cache was built (so matplotlib had something to say), and the log has the room only.
    assert list((tmp_path / "empty-cache").glob("fontlist-*.json"))
    assert done.stderr.strip().splitlines() == ["beekeeper.local the room's own line"]
