"""How every browser test starts Debian's chromium: the one path and the flags it needs here.

Without the background-networking flags Chromium keeps trying hosts this machine can not reach.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS

CHROMIUM = "/usr/bin/chromium"
# A change reaches a watched page within the edge's copy lifetime and one document interval;
# the browser tests wait twice that, and a few seconds, for a busy machine.
REACHES_MS = 2 * (STATE_MAX_AGE_SECONDS + DOCUMENT_EVERY_SECONDS + 3) * 1000
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def screenshot_path(picture: Path, tmp_path: Path) -> Path:
    """Where a test saves its screenshot: over the documents' `picture` (docs/screenshots) with
    BEEKEEPER_UPDATE_SCREENSHOTS=1, else in the test's own folder, so that running the suite
    leaves the checkout as it was."""
    if os.environ.get("BEEKEEPER_UPDATE_SCREENSHOTS") == "1":
        picture.parent.mkdir(parents=True, exist_ok=True)
        return picture
    return tmp_path / picture.name


@dataclass
class PageWatch:
    """What a page did: every request it made and every error it reported."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def watch(page: Any) -> PageWatch:
    """Start recording a page's requests, uncaught exceptions and console errors."""
    seen = PageWatch()
    page.on("request", lambda request: seen.requests.append(request.url))
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on(
        "console",
        lambda message: seen.errors.append(message.text) if message.type == "error" else None,
    )
    return seen


# A report page's charts as the browser laid them out: each figure's id, its chart's size, how
# many shapes matplotlib drew in it, its text alternative and the rows of its numbers.
DRAWN_CHARTS = """
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
