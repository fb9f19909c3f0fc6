"""What a visitor meets when the operator holds, closes, resumes, resets or switches off the room,
and when the room is out of reach: headless Chromium against `beekeeper local --demo` (the
room's real code, its page, and a shop that verifies each ticket offline, once).

Issue 35, points 2-7. Each page records every text its place, estimate, notice and out-of-reach
line ever show (a MutationObserver installed before the page's script runs), so a test judges
everything a visitor saw, not a sample. Waits are for conditions, with time limits made of the
room's own timings (the hold's notice, the document's interval and the edge's copy lifetime,
the minute) and room to spare on a busy machine; none is a fixed sleep.
"""

from __future__ import annotations

import re
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core.push import FALLBACK_DOCUMENT_SECONDS
from beekeeper.core.serving import (
    CLOSED_DOCUMENT_EVERY_SECONDS,
    DOCUMENT_EVERY_SECONDS,
    HOLD_NOTICE_SECONDS,
    OUT_OF_REACH_SECONDS,
)
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS
from beekeeper.waiting_room_site import load_locales
from tests.support.chromium import CHROMIUM, REACHES_MS
from tests.support.localroom.http import cookie_value, follow_link, get
from tests.support.localroom.process import LocalProcess, operator, start_local, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.minutes(4.5)]

if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("beekeeper.room.producer", reason="needs the admission pipeline's modules")

from beekeeper.local.demo_shop import ADMITTED_TEXT  # noqa: E402 - after the skips above

EN = load_locales()["en"]
PAUSED = str(EN["pausedText"])
FRONT = str(EN["positionNow"])
ANY_MOMENT = str(EN["waitNow"])

# Every text the page's place, estimate, notice and out-of-reach line show, with the time.
RECORDER = """
(() => {
  const hooks = ["position", "wait", "notice-title", "notice-text", "retry"];
  const log = [];
  window.__shown = log;
  const look = () => {
    const entry = { at: Date.now() };
    for (const hook of hooks) {
      const element = document.querySelector(`[data-bk="${hook}"]`);
      entry[hook] = element && !element.closest("[hidden]") ? element.textContent : null;
    }
    const last = log[log.length - 1];
    if (!last || hooks.some((hook) => last[hook] !== entry[hook])) log.push(entry);
  };
  new MutationObserver(look).observe(document, {
    subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ["hidden"],
  });
})();
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def local_room(tmp_path: Path) -> Iterator[Callable[..., LocalProcess]]:
    """Starts `beekeeper local --demo` rooms (each stopped after the test)."""
    started: list[LocalProcess] = []

    def start(*args: str, name: str = "truth", config: Path | None = None) -> LocalProcess:
        room = start_local(
            ["--demo", "--demo-port", "0", "--join-work", "0", *args],
            config or tmp_path / "config",
            name=name,
        )
        started.append(room)
        return room

    yield start
    for room in started:
        if room.process.poll() is None:
            room.interrupt()


def run(room: LocalProcess, *args: str) -> str:
    """An operator command on the running room, as the operator types it."""
    result = operator(room.config_dir, *args, room.name, "--local")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def visit(browser: Any, room: LocalProcess) -> Any:
    """A visitor of their own: the marketing link, then the page with their place."""
    page = browser.new_context(locale="en-GB", timezone_id="UTC").new_page()
    page.add_init_script(RECORDER)
    page.goto(room.urls["marketing URL"])
    page.wait_for_url(re.compile(r".*/room#turn=\d+$"), timeout=30_000)
    return page


def join_over_http(room: LocalProcess, count: int) -> list[str]:
    """Visitors ahead (their tokens), joined as a script joins: no page."""
    tokens = []
    for _ in range(count):
        answer = follow_link(room.urls["marketing URL"])
        token = cookie_value(answer.header("Set-Cookie") or "", "beekeeper_token")
        assert token is not None, answer.text
        tokens.append(token)
    return tokens


def polling(room: LocalProcess, token: str) -> dict[str, Any]:
    url = room.urls["page URL"].removesuffix("/room") + "/polling"
    answer: dict[str, Any] = get(url, cookie=f"beekeeper_token={token}").json()
    return answer


def shared_state(room: LocalProcess) -> dict[str, Any]:
    """The shared state document, as the edge gives it to every page."""
    url = room.urls["page URL"].removesuffix("/room") + "/state"
    document: dict[str, Any] = get(url).json()
    return document


def room_state(room: LocalProcess) -> str:
    """The shared state's `state`."""
    return str(shared_state(room)["state"])


def hold_and_wait(room: LocalProcess) -> None:
    """`beekeeper hold`, and the moment it was announced for has come."""
    run(room, "hold")
    held = wait_until(lambda: room_state(room) == "paused", timeout=HOLD_NOTICE_SECONDS + 20)
    assert held, room_state(room)


def shown(page: Any) -> list[dict[str, Any]]:
    record: list[dict[str, Any]] = page.evaluate("window.__shown")
    return record


def places(record: list[dict[str, Any]]) -> list[int]:
    """The numbered places a page showed, in order ("next in line" is 1)."""
    found = []
    for entry in record:
        text = entry["position"] or ""
        number = re.fullmatch(r"You are number ([\d,]+) in line\.", text)
        if number:
            found.append(int(number.group(1).replace(",", "")))
        elif text == EN["positionOne"]:
            found.append(1)
    return found


def wait_for(page: Any, hook: str, pattern: str, timeout_ms: float) -> None:
    sync_api.expect(page.locator(f'[data-bk="{hook}"]')).to_contain_text(
        re.compile(pattern), timeout=timeout_ms
    )


def in_shop(page: Any, timeout_ms: float) -> None:
    """The page went to the demo shop, which verified its ticket offline and let it in."""
    sync_api.expect(page.locator("#verdict")).to_have_text(ADMITTED_TEXT, timeout=timeout_ms)
    sync_api.expect(page.locator("#how")).to_contain_text("verified your admission ticket offline")


# -- point 2: a held line never shows the front, and a place never goes back up ---------------


def test_a_held_line_keeps_every_place_as_it_is_and_never_says_any_moment_now(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    # 6 a minute in 10 s minutes: a slot every 1.6 s, so that a page whose line ran on past
    # the hold for a few seconds would show places the room never reached, the front among them.
    minute = 10
    room = local_room("--rate", "6", "--minute-seconds", str(minute))
    hold_and_wait(room)
    join_over_http(room, 24)
    pages = [visit(browser, room) for _ in range(3)]
    for page in pages:
        wait_for(page, "wait", re.escape(PAUSED[:30]), REACHES_MS)
    # The line moves, and is held again while it moves.
    run(room, "resume")
    for page in pages:
        wait_for(page, "wait", r"Estimated wait", REACHES_MS)
    run(room, "hold")
    for page in pages:
        wait_for(page, "wait", re.escape(PAUSED[:30]), (HOLD_NOTICE_SECONDS * 1000) + REACHES_MS)
    # Held while the room published its held state for two of its minutes (the pages were told
    # of the hold, or fetched it, and kept it), then resumed.
    held_since = shared_state(room)["updated_at"]
    assert wait_until(
        lambda: shared_state(room)["updated_at"] >= held_since + 2 * minute,
        timeout=2 * REACHES_MS / 1000,
    )
    run(room, "resume")
    for page in pages:
        wait_for(page, "wait", r"Estimated wait|your turn", REACHES_MS)
    for page in pages:
        record = shown(page)
        paused = [entry for entry in record if (entry["wait"] or "").startswith(PAUSED[:30])]
        assert paused, record
        assert all(entry["position"] != FRONT for entry in paused), paused
        assert all(ANY_MOMENT not in (entry["wait"] or "") for entry in paused), paused
        seen = places(record)
        assert seen == sorted(seen, reverse=True), f"a place went back up: {seen}"


# -- point 3: off lets the whole line in, each with a ticket the shop accepts -----------------


def test_off_lets_every_waiting_page_and_every_newcomer_into_the_shop_with_a_ticket(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    minute = 60
    room = local_room("--rate", "1", "--minute-seconds", str(minute))
    ahead = join_over_http(room, 3)
    pages = [visit(browser, room) for _ in range(3)]
    for page in pages:
        wait_for(page, "position", r"number \d+ in line", REACHES_MS)
    run(room, "off")
    # The running consumer drains the line once it reads the switch; when none is running
    # (a busy machine's consumer can finish its minute's one admission first), the next
    # minute's trigger starts the drain: each page's ticket is there within a minute and the
    # page's own asking (a fresh-clone run beside four workers once took longer than 22 s).
    for page in pages:
        in_shop(page, REACHES_MS + minute * 1000)
    # Those who joined without a page were let in too: their admission is there for the page
    # or the app that asks (the room drained the line, every one with a ticket).
    for token in ahead:
        answer = polling(room, token)
        assert answer["allow"] is True and "beekeeper_ticket=" in answer["origin"], answer
    newcomer = browser.new_context().new_page()
    newcomer.goto(room.urls["marketing URL"])
    in_shop(newcomer, REACHES_MS)
    # On again: nobody let in while off holds a place; a newcomer is first in line.
    run(room, "on")
    (token,) = join_over_http(room, 1)
    assert polling(room, token).get("position", 1) == 1


# -- point 4: close, then resume, brings the pages back with their places ---------------------


def test_a_closed_event_that_resumes_brings_every_page_back_with_its_place(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    # 2 a minute in 20 s minutes: the line moves a place in 10 s, while a closed page listens
    # at its slow pace.
    room = local_room("--rate", "2", "--minute-seconds", "20")
    hold_and_wait(room)
    join_over_http(room, 6)
    pages = [visit(browser, room) for _ in range(2)]
    for page in pages:
        wait_for(page, "wait", re.escape(PAUSED[:30]), REACHES_MS)
    run(room, "close", "--message", "Sold out for now")
    for page in pages:
        wait_for(page, "notice-title", "This event is over", REACHES_MS)
        wait_for(page, "notice-text", r"patience\. Sold out for now\.$", REACHES_MS)
    run(room, "resume")
    back_ms = (CLOSED_DOCUMENT_EVERY_SECONDS + STATE_MAX_AGE_SECONDS + 5) * 2000
    for page in pages:
        sync_api.expect(page.locator('[data-bk="notice"]')).to_be_hidden(timeout=back_ms)
        wait_for(page, "position", r"(number \d+|next) in line", REACHES_MS)
        sync_api.expect(page.locator('[data-bk="waiting"]')).to_be_visible()


# -- point 5: a reset tells the last event's visitors their place is gone ---------------------


def test_after_a_reset_the_last_events_page_says_the_place_is_gone_and_joins_anew(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    room = local_room("--rate", "1", "--minute-seconds", "60")
    join_over_http(room, 2)
    page = visit(browser, room)
    wait_for(page, "position", r"number \d+ in line", REACHES_MS)
    turn = int(page.url.rsplit("=", 1)[1])
    run(room, "reset", "--yes", "--force")
    wait_for(page, "notice-title", str(EN["resetTitle"]), REACHES_MS)
    link = page.get_by_role("link", name=str(EN["joinLink"]))
    assert link.get_attribute("href") == room.urls["marketing URL"]
    last_events_page = page.url
    link.click()
    # A new place, after every place of the last event (or straight into the shop), at once:
    # the producer reads the reset afresh for a returning visitor (its cached config may be
    # seconds older than the page's notice). The wait is for another address than the last
    # event's page, which matches the pattern too.
    arrived = re.compile(r".*(/room#turn=\d+|/)$")
    page.wait_for_url(
        lambda url: url != last_events_page and arrived.fullmatch(url) is not None,
        timeout=30_000,
    )
    if "#turn=" in page.url:
        assert int(page.url.rsplit("=", 1)[1]) > turn


# -- point 6: a resume admits at once, after a restart of a local room too ---------------------


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
def test_a_resume_lets_the_first_in_line_in_within_seconds(
    local_room: Callable[..., LocalProcess], browser: Any, restart: bool
) -> None:
    port = str(free_port())
    room = local_room("--rate", "1", "--minute-seconds", "60", "--port", port)
    hold_and_wait(room)
    page = visit(browser, room)
    wait_for(page, "wait", re.escape(PAUSED[:30]), REACHES_MS)
    if restart:
        room.interrupt()
        room = local_room("--rate", "1", "--minute-seconds", "60", "--port", port)
    # Early in a minute: its trigger has run and the next one is most of a minute away, which
    # the resume must not wait for.
    assert wait_until(lambda: time.time() % 60 < 10, timeout=70)
    run(room, "resume")
    # Admitted within 5 s of the command, noticed by the page when its document shows the
    # line moving again (the edge's copy, then the page's next fetch). After a restart the
    # page's push channel is gone with the old process: it fetches on the channel's fallback
    # interval instead (once 27 s after its last fetch).
    every = FALLBACK_DOCUMENT_SECONDS if restart else DOCUMENT_EVERY_SECONDS
    in_shop(page, (5 + STATE_MAX_AGE_SECONDS + every + 3) * 1500)


# -- point 7: out of reach, said in plain words; back, said too ------------------------------


def test_a_page_that_can_not_reach_the_room_says_so_keeps_the_place_and_says_when_it_is_back(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    room = local_room("--rate", "1", "--minute-seconds", "60")
    join_over_http(room, 3)
    page = visit(browser, room)
    wait_for(page, "position", r"number \d+ in line", REACHES_MS)
    # The room's address stops answering this page (its network, say).
    base = room.urls["page URL"].removesuffix("/room")
    page.route(f"{base}/state", lambda route: route.abort())
    page.route(f"{base}/polling", lambda route: route.abort())
    out_ms = (OUT_OF_REACH_SECONDS + DOCUMENT_EVERY_SECONDS + 3) * 2000
    wait_for(page, "retry", r"We have not reached the waiting room since", out_ms)
    wait_for(page, "retry", r"Your place is kept.*Trying again at \d\d:\d\d:\d\d", 1000)
    place = page.locator('[data-bk="position"]').text_content()
    frozen = page.locator('[data-bk="wait"]').text_content()
    # The estimate waits while the room is out of reach: the next backed-off try comes and
    # goes, and the page still shows the same place and estimate.
    retries_before = len([e for e in shown(page) if (e["retry"] or "").startswith("We have not")])
    wait_until(
        lambda: (
            len([e for e in shown(page) if (e["retry"] or "").startswith("We have not")])
            > retries_before
        ),
        timeout=70,
    )
    assert page.locator('[data-bk="wait"]').text_content() == frozen
    assert page.locator('[data-bk="position"]').text_content() == place
    page.unroute(f"{base}/state")
    page.unroute(f"{base}/polling")
    wait_for(page, "retry", str(EN["backInReach"]), 70_000)
    wait_for(page, "position", r"number \d+ in line", REACHES_MS)


def test_the_recorder_sees_what_the_page_shows(
    local_room: Callable[..., LocalProcess], browser: Any
) -> None:
    """The record the tests above judge is the page's: it holds the texts the page showed."""
    room = local_room("--rate", "1", "--minute-seconds", "60")
    join_over_http(room, 1)
    page = visit(browser, room)
    wait_for(page, "position", r"number \d+ in line", REACHES_MS)
    text = page.locator('[data-bk="position"]').text_content()
    assert text in [entry["position"] for entry in shown(page)]
    assert set(places(shown(page))) == {int(re.sub(r"\D", "", text or "") or 1)}
