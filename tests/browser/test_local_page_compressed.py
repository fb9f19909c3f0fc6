"""A local room's page, first loaded in headless Chromium, transfers what CloudFront would send:
the page compressed with Brotli (Chromium accepts it, over HTTPS and to a loopback address
alike), about 14 KB of its 49 KB; a client that accepts nothing gets the page itself."""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from typing import Any

import brotli
import pytest

from beekeeper.local.edge_compression import BROTLI_QUALITY
from tests.support.chromium import CHROMIUM
from tests.support.localroom.process import LocalProcess, start_local

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

NAVIGATION = """
() => {
  const entry = performance.getEntriesByType("navigation")[0];
  return { encoded: entry.encodedBodySize, decoded: entry.decodedBodySize };
}
"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        ["--demo", "--demo-port", "0"], tmp_path_factory.mktemp("config"), name="compressed"
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def test_the_pages_first_load_transfers_its_brotli_size(room: LocalProcess, browser: Any) -> None:
    url = room.urls["page URL"]
    # The page itself, as a client that accepts no compression gets it.
    with urllib.request.urlopen(url, timeout=30) as plain:  # noqa: S310 - the room's loopback
        page = plain.read()
        assert plain.headers.get("Content-Encoding") is None
    assert len(page) > 45_000

    context = browser.new_context()
    try:
        tab = context.new_page()
        response = tab.goto(url)
        assert response is not None and response.status == 200
        assert response.headers["content-encoding"] == "br"
        sizes = tab.evaluate(NAVIGATION)
    finally:
        context.close()
    assert sizes["decoded"] == len(page)
    assert sizes["encoded"] == len(brotli.compress(page, quality=BROTLI_QUALITY))
    # Under 17 KB (docs/limits.md says 17 KB gzipped; brotli sends less than gzip).
    assert sizes["encoded"] < 17 * 1024
