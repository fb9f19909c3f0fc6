"""POST /leave with the cookie, from the browser's own headers (issue 27.4), in headless Chromium.

A capacity-mode local room with one place, taken. A visitor waits in line; a page of the same
site on another loopback port (where the room's SameSite=Lax cookie still rides along) posts to
the room's /leave as a text/plain beacon and a no-cors fetch: both get 403 and the visitor keeps
their place. The same page's beacon to a third port records what Chromium sends with such a
request (Playwright's view of a beacon's request holds only its provisional headers). The room's
own page's "Leave the line" button then leaves.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.localroom.http import follow_link, get
from tests.support.localroom.process import LocalProcess, start_local, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")

FOREIGN_PAGE = """<!doctype html><title>another page of the site</title>
<script>
  const leave = "{leave}";
  navigator.sendBeacon(leave, "bye");
  fetch(leave, {{method: "POST", mode: "no-cors", credentials: "include", body: "bye"}});
  navigator.sendBeacon("{recorder}", "bye");
</script>"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    args = ["--origin", "http://localhost:9/", "--rate", "600", "--max-inside", "1"]
    args += ["--session-minutes", "5", "--claim-minutes", "5"]
    local = start_local(args, tmp_path_factory.mktemp("config"), name="leave-origin")
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


RECORDED: list[dict[str, str]] = []


class Site(http.server.BaseHTTPRequestHandler):
    """The foreign page (GET), and the recorder of the beacons it sends (POST)."""

    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(self.page)

    def do_POST(self) -> None:
        RECORDED.append({name.lower(): value for name, value in self.headers.items()})
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def foreign_site(room: LocalProcess) -> Iterator[str]:
    """A page on another loopback port (the same site as the room, not its origin), and a
    recorder on a third."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site) for _ in range(2)]
    page_server, recorder = servers
    leave_url = room.urls["page URL"].removesuffix("/room") + "/leave"
    recorder_url = f"http://127.0.0.1:{recorder.server_address[1]}/leave"
    Site.page = FOREIGN_PAGE.format(leave=leave_url, recorder=recorder_url).encode()
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{page_server.server_address[1]}/"
    finally:
        for server in servers:
            server.shutdown()


def polling_state(room: LocalProcess, context: Any) -> str:
    cookies = context.cookies(room.urls["page URL"])
    header = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
    polling = room.urls["page URL"].removesuffix("/room") + "/polling"
    return str(get(polling, cookie=header).json().get("state"))


def test_only_the_rooms_own_page_leaves_with_the_cookie(
    room: LocalProcess, browser: Any, foreign_site: str
) -> None:
    # Someone takes the one place (and arrives), so our visitor waits.
    holder = follow_link(room.urls["marketing URL"]).header("Set-Cookie") or ""
    holder_cookie = holder.split(";", 1)[0]
    polling = room.urls["page URL"].removesuffix("/room") + "/polling"
    assert wait_until(lambda: get(polling, cookie=holder_cookie).json()["allow"], timeout=30)
    get(room.urls["page URL"].removesuffix("/room") + "/enter", cookie=holder_cookie)

    context = browser.new_context()
    leaves: list[tuple[int, dict[str, str]]] = []  # each /leave's status and request headers

    room_leave = room.urls["page URL"].removesuffix("/room") + "/leave"

    def record(response: Any) -> None:
        if response.url == room_leave:
            leaves.append((response.status, response.request.all_headers()))

    def until_leaves(page: Any, count: int) -> bool:
        # Playwright delivers its events while it runs: wait in the page, not in time.sleep.
        for _ in range(100):
            if len(leaves) >= count:
                return True
            page.wait_for_timeout(100)
        return False

    context.on("response", record)
    try:
        page = context.new_page()
        page.goto(room.urls["marketing URL"])
        page.wait_for_url(
            re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000
        )
        assert wait_until(lambda: polling_state(room, context) == "waiting", timeout=10)

        # The same site's other page, in the visitor's own browser: the cookie rides along.
        foreign = context.new_page()
        foreign.goto(foreign_site)
        assert until_leaves(foreign, 2), leaves
        assert [status for status, _ in leaves] == [403, 403]
        # What Chromium sends with such a beacon, as the recorder on the third port saw it:
        # the cookie of the site, the page's origin, and "same-site".
        assert wait_until(lambda: len(RECORDED) >= 1, timeout=5)
        (seen,) = RECORDED
        assert seen["origin"] == foreign_site.rstrip("/")
        assert seen["sec-fetch-site"] == "same-site"
        assert "beekeeper_token=" in seen.get("cookie", "")
        foreign.close()
        assert polling_state(room, context) == "waiting"  # the place is kept

        # The room's own page leaves.
        leaves.clear()
        page.get_by_role("button", name="Leave the line").click()
        sync_api.expect(page.locator('[data-bk="notice-title"]')).to_have_text("You left the line")
        assert until_leaves(page, 1)
        assert wait_until(lambda: polling_state(room, context) == "left", timeout=5)
        assert [status for status, _ in leaves] == [200]
    finally:
        context.close()
