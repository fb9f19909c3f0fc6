"""No page but the shop's server can spend a visitor's one redeem, in headless Chromium.

A local room (rate mode and capacity mode) admits a visitor who joined in the browser. Then,
in the visitor's own browser, two pages try to redeem the admission with the room's cookie:

- a page of another site (`localhost` is another site than the room's `127.0.0.1`) sends the
  tab to the room's `/client?redeem=1`: a top-level navigation, which carries the room's
  SameSite=Lax cookie;
- a page of the same site (another loopback port) loads `<img src=".../client?redeem=1">`, which
  carries the cookie too.

Both are answered 400 and redeem nothing; the shop's own redeem afterwards, `?token=<T>&redeem=1`
from its server, still answers `{"allow": true}`.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    CLIENT_TOKEN_PARAMETER,
    COOKIE_NAME,
)
from beekeeper.vtl import BAD_REQUEST_STATUS, REDEEM_WITHOUT_TOKEN_ANSWER
from tests.support.localroom.http import get
from tests.support.localroom.process import LocalProcess, start_local, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")

REDEEM = f"{CLIENT_REDEEM_PARAMETER}={CLIENT_REDEEM_VALUE}"
NAVIGATING_PAGE = """<!doctype html><title>another site</title>
<script>location.href = "{client}";</script>"""
IMAGE_PAGE = """<!doctype html><title>another page of the site</title>
<img id="pixel" src="{client}" alt="">"""
MODES = {
    "rate": ["--rate", "600"],
    "capacity": ["--rate", "600", "--max-inside", "5", "--claim-minutes", "5"],
}


@pytest.fixture(scope="module", params=sorted(MODES))
def room(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[LocalProcess]:
    args = ["--origin", "http://localhost:9/", *MODES[request.param]]
    local = start_local(args, tmp_path_factory.mktemp("config"), name=f"redeem-{request.param}")
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


class Page(http.server.BaseHTTPRequestHandler):
    """Serves one page; its text is set per server (a subclass each)."""

    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def foreign_pages(room: LocalProcess) -> Iterator[dict[str, str]]:
    """The navigating page on `localhost` (another site) and the image page on 127.0.0.1 (the
    room's site, another port), each on its own loopback server."""
    client = room.urls["client check URL"] + "?" + REDEEM
    served = {"navigation": NAVIGATING_PAGE, "image": IMAGE_PAGE}
    servers = {
        name: http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0),
            type(f"{name}Page", (Page,), {"page": text.format(client=client).encode()}),
        )
        for name, text in served.items()
    }
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {
            "navigation": f"http://localhost:{servers['navigation'].server_address[1]}/",
            "image": f"http://127.0.0.1:{servers['image'].server_address[1]}/",
        }
    finally:
        for server in servers.values():
            server.shutdown()


def test_a_foreign_pages_navigation_and_image_can_not_spend_the_redeem(
    room: LocalProcess, browser: Any, foreign_pages: dict[str, str]
) -> None:
    client_url = room.urls["client check URL"]
    polling = room.urls["page URL"].removesuffix("/room") + "/polling"
    context = browser.new_context()
    # Each redeem the browser sent and finished: (its destination, its status or None when the
    # browser kept the answer from the page, as it does with JSON loaded as an image).
    redeems: list[tuple[str, int | None]] = []

    def finished(request: Any) -> None:
        if request.url.startswith(client_url):
            response = request.response()
            redeems.append((request.resource_type, response.status if response else None))

    def until_redeems(page: Any, count: int) -> bool:
        # Playwright delivers its events while it runs: wait in the page, not in time.sleep.
        for _ in range(100):
            if len(redeems) >= count:
                return True
            page.wait_for_timeout(100)
        return False

    context.on("requestfinished", finished)
    context.on("requestfailed", finished)
    try:
        page = context.new_page()
        page.goto(room.urls["marketing URL"])
        page.wait_for_url(
            re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000
        )
        (cookie,) = [c for c in context.cookies(client_url) if c["name"] == COOKIE_NAME]
        token = cookie["value"]
        room_cookie = f"{COOKIE_NAME}={token}"
        # The visitor is admitted: from here a redeem would take.
        assert wait_until(lambda: get(polling, cookie=room_cookie).json()["allow"], timeout=30)
        page.close()

        # A page of the same site loads the redeem as an image.
        image = context.new_page()
        image.goto(foreign_pages["image"])
        assert until_redeems(image, 1), redeems
        image.close()
        # A page of another site sends the tab there.
        navigation = context.new_page()
        navigation.goto(foreign_pages["navigation"])
        navigation.wait_for_url(client_url + "?" + REDEEM)
        assert until_redeems(navigation, 2), redeems

        assert [kind for kind, _ in redeems] == ["image", "document"]
        # The navigation's answer is the room's: 400, and the sentence that says what to send.
        assert redeems[1][1] == BAD_REQUEST_STATUS
        assert json.loads(navigation.inner_text("body")) == REDEEM_WITHOUT_TOKEN_ANSWER
        navigation.close()

        # The shop's server redeems with the token: the first redeem, and the only one.
        shop_redeem = f"{client_url}?{CLIENT_TOKEN_PARAMETER}={quote(token)}&{REDEEM}"
        assert get(shop_redeem).json() == {"allow": True}
        assert get(shop_redeem).json() == {"allow": False, "state": "redeemed"}
    finally:
        context.close()
