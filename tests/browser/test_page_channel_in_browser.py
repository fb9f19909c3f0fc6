"""The waiting page's push channel in headless Chromium, against a local room in this process
(its real code, edge and channel, local/channel.py): twenty pages subscribe as they load, the
operator's `beekeeper hold` reaches all of them within 3 s of the publish, and none asks the
shared document more than 3 times a minute (issue 36 point 8); with the channel refusing every
connection a page falls back to the shared document and shows the hold within 35 s."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from beekeeper.cli.main import cli
from beekeeper.core import push
from beekeeper.core.routes import STATE
from beekeeper.local.room import LocalOptions, LocalRoom, local_room
from beekeeper.waiting_room_site import load_locales
from tests.integration.test_local_channel import open_socket, receive, subscribe
from tests.support.localroom.http import follow_link
from tests.support.localroom.process import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.minutes(1.1)]

PAGES = 20
# Places taken before the pages' visitors come, so that none of them is admitted (one a minute)
# while the test runs.
AHEAD = 5
PUSH_NOTICE_SECONDS = 3  # issue 36 point 8: all 20 pages show a hold within 3 s
FETCHES_PER_MINUTE = 3  # ... while each asked the shared document at most 3 times a minute
# Without the channel: the fallback's fetch interval, the edge copy's age and a second.
FALLBACK_NOTICE_SECONDS = 35
PAUSED_TEXT = str(load_locales()["en"]["pausedText"])
# A page waits this long for what it must show: a bound on a busy machine, not a timing.
PATIENCE_MS = 60_000

# Each page writes down (its own clock, ms) when its wait first says the line is paused.
WATCH_PAUSED = """(paused) => {
  const wait = document.querySelector('[data-bk="wait"]');
  const check = () => {
    if (!window.pausedAt && wait.textContent === paused) window.pausedAt = Date.now();
  };
  const all = { childList: true, characterData: true, subtree: true };
  new MutationObserver(check).observe(wait, all);
  check();
}"""


@pytest.fixture
def room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalRoom]:
    monkeypatch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path))
    # A line that stays: one admission a minute, many ahead of our visitors.
    started = LocalRoom(
        local_room(
            name="drop",
            display_name="Drop",
            rate=1,
            join_work=0,
            origin="http://127.0.0.1:9/shop",
        ),
        LocalOptions(port=0, operator_port=0, save_line=False),
    )
    started.start()
    assert started.urls is not None
    for _ in range(AHEAD):
        assert follow_link(started.urls.marketing_url).status == 302
    try:
        yield started
    finally:
        started.stop()


def open_waiting(
    browser: Any, room: LocalRoom, count: int
) -> tuple[list[Any], list[list[float]], Callable[[], None]]:
    """`count` visitors, each in a context of their own, on the waiting page; the times (s)
    each page asked the shared document."""
    assert room.urls is not None
    contexts, pages, fetches = [], [], []
    for _ in range(count):
        context = browser.new_context(locale="en-GB")
        page = context.new_page()
        asked: list[float] = []
        page.on(
            "request",
            lambda request, asked=asked: (
                asked.append(time.monotonic()) if request.url.endswith(STATE.relative) else None
            ),
        )
        page.goto(room.urls.marketing_url)
        page.wait_for_function(
            "() => /number [\\d,]+ in line|next in line/i.test(document.body.innerText)",
            timeout=PATIENCE_MS,
        )
        page.evaluate(WATCH_PAUSED, PAUSED_TEXT)
        contexts.append(context)
        pages.append(page)
        fetches.append(asked)

    def close() -> None:
        for context in contexts:
            context.close()

    return pages, fetches, close


def hold(name: str) -> None:
    """`beekeeper hold` as the operator runs it (the room holds from the moment it says)."""
    done = CliRunner().invoke(cli, ["hold", name, "--local"])
    assert done.exit_code == 0, done.output


def held_published(socket: Any) -> float:
    """When (epoch ms) a subscriber of the room's channel got the publish that says the room is
    held (the hold takes effect at the moment the command announces, and is published then)."""
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while True:
        assert time.monotonic() < deadline, "the hold was never published"
        try:
            message = receive(socket)
        except TimeoutError:
            continue
        if message.get("type") != "data":
            continue
        if json.loads(message["event"])["doc"]["state"] == "paused":
            return time.time() * 1000


def subscriber(room: LocalRoom) -> Any:
    assert room.channel is not None
    socket = open_socket(room.channel)
    socket.send(json.dumps({"type": "connection_init"}))
    assert receive(socket)["type"] == "connection_ack"
    assert subscribe(socket, room.channel)["type"] == "subscribe_success"
    return socket


def paused_at(page: Any) -> float:
    page.wait_for_function("() => window.pausedAt !== undefined", timeout=PATIENCE_MS)
    return float(page.evaluate("() => window.pausedAt"))


def subscribed(room: LocalRoom, count: int) -> None:
    assert room.channel is not None
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while room.channel.counts().subscriptions < count:
        assert time.monotonic() < deadline, room.channel.counts()
        time.sleep(0.05)


def test_twenty_pages_show_a_hold_within_3_s_and_ask_the_document_rarely(
    room: LocalRoom, browser: Any
) -> None:
    pages, fetches, close = open_waiting(browser, room, PAGES)
    try:
        subscribed(room, PAGES)
        opened = time.monotonic()
        watcher = subscriber(room)
        hold("drop")
        published = held_published(watcher)
        watcher.close()
        noticed = [paused_at(page) for page in pages]
        shown = [at - published for at in noticed]
        # Each page showed the hold within 3 s of its publish (the hold takes effect a few
        # seconds after the command, at the moment it announces: that moment's publish).
        assert max(shown) <= PUSH_NOTICE_SECONDS * 1000, shown
        # A minute on, with the line held: no page polled the document.
        assert room.channel is not None
        deliveries = room.channel.counts().deliveries
        assert deliveries >= PAGES
        minutes = max(1.0, (time.monotonic() - opened) / 60)
        for asked in fetches:
            per_minute = len(asked) / minutes
            assert per_minute <= FETCHES_PER_MINUTE, (len(asked), minutes)
    finally:
        close()


def test_a_page_refused_the_channel_shows_a_hold_from_the_shared_document_within_35_s(
    room: LocalRoom, browser: Any
) -> None:
    assert room.channel is not None
    # The test's own watcher connects first: refusals begin before any page loads, so no
    # page's retry can slip through while the watcher is let in.
    watcher = subscriber(room)
    room.channel.refuse_connections = True
    pages, _, close = open_waiting(browser, room, 2)
    try:
        hold("drop")
        published = held_published(watcher)
        watcher.close()
        noticed = [paused_at(page) for page in pages]
        for at in noticed:
            assert at - published <= FALLBACK_NOTICE_SECONDS * 1000
        # The test's own watcher has gone (its close reaches the channel a moment later on a
        # busy machine): no page holds a connection, let alone a subscription.
        channel = room.channel
        assert wait_until(lambda: channel.counts().connections == 0, timeout=10)
        assert room.channel.counts().subscriptions == 0
        # The socket was tried, refused, and tried again.
        assert room.channel.counts().refused >= 2
        assert push.FALLBACK_DOCUMENT_SECONDS <= FALLBACK_NOTICE_SECONDS
    finally:
        close()
