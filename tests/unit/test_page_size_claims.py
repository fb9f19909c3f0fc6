"""The waiting room page's size as the README, docs/page.md and docs/limits.md state it is the size
`render_page` makes today: in whole KB of 1,024 bytes, rounded to the nearest, uncompressed
and gzipped (Python's gzip, level 9), for the documented sample room (stacks/app.py).

A change that makes the page bigger or smaller fails here until the figures say so.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from beekeeper.stacks.app import SAMPLE_ROOM
from beekeeper.waiting_room_site import render_page

REPO = Path(__file__).resolve().parents[2]
# Where each document states the page's size, and how.
CLAIMS = {
    "README.md (the waiting room page)": (
        "README.md",
        r"one self-contained page \(about (\d+) KB, (\d+) KB gzipped",
    ),
    "docs/limits.md": (
        "docs/limits.md",
        r"\| waiting room page \| (\d+) KB \((\d+) KB",
    ),
    "docs/page.md": ("docs/page.md", r"document \(about (\d+) KB, (\d+) KB gzipped\)"),
}


def measured_kb() -> tuple[int, int]:
    page = render_page(SAMPLE_ROOM).encode("utf-8")
    return round(len(page) / 1024), round(len(gzip.compress(page, 9)) / 1024)


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_the_documented_size_is_the_pages(claim: str) -> None:
    path, pattern = CLAIMS[claim]
    text = " ".join((REPO / path).read_text(encoding="utf-8").split())  # lines joined
    found = re.search(pattern, text)
    assert found is not None, f"{claim}: the size is no longer stated as the test expects"
    stated = (int(found.group(1)), int(found.group(2)))
    assert stated == measured_kb(), f"{claim} says {stated} KB; render_page makes {measured_kb()}"
