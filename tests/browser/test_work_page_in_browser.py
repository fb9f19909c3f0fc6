"""The work page in headless Chromium, against `beekeeper local` at the default join_work.

A new visitor follows the marketing link, is sent to the work page with a challenge, whose
solver runs in Web Workers under the page's own Content-Security-Policy, and comes back to the
link with the solution for a place in line. The page makes no request of its own, reads well
in English and German, and axe-core finds nothing serious on it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from beekeeper.core.datamodel import COOKIE_NAME, Token
from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS, Challenge
from tests.support.chromium import watch
from tests.support.localroom.process import LocalProcess, start_local
from tests.support.page_browser import AXE, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    # The room's default join_work: what a deployed room asks of a visitor.
    local = start_local(
        ["--origin", "http://localhost:9/", "--rate", "60"],
        tmp_path_factory.mktemp("config"),
        name="work-browser",
    )
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


def work_url(room: LocalProcess, fragment: str = "") -> str:
    return room.urls["page URL"].removesuffix("/room") + "/work" + fragment


def unsolvable_challenge() -> str:
    """A well-formed challenge that takes the page far longer than a test: the page stays in
    its working state (this room never issued it, so it could not give a place anyway)."""
    return str(Challenge(int(time.time()), 1, 64, "A" * 22, "B" * 22))


def test_a_new_visitor_does_the_work_in_workers_and_joins_the_line(
    room: LocalProcess, browser: Any
) -> None:
    context = browser.new_context(locale="en-GB")
    try:
        page = context.new_page()
        seen = watch(page)
        workers: list[Any] = []
        page.on("worker", lambda worker: workers.append(worker))
        started = time.monotonic()
        page.goto(room.urls["marketing URL"])
        page.wait_for_url(
            re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000
        )
        took = time.monotonic() - started
        assert seen.errors == []  # no CSP violation, no script error
        # The link, the work page, the link with the solution, the room page and its polls:
        # the work page itself asked the network for nothing (its workers' scripts are blob:
        # URLs it made itself).
        network = [url for url in seen.requests if not url.startswith("blob:")]
        work_at = next(i for i, url in enumerate(network) if "/work" in url)
        after_work = network[work_at + 1]
        assert after_work.startswith(room.urls["marketing URL"] + "?work=1."), after_work
        assert workers, "the solver ran in Web Workers"
        (cookie,) = [c for c in context.cookies() if c["name"] == COOKIE_NAME]
        assert Token.parse(cookie["value"]) is not None and cookie["httpOnly"]
        # The default work, on this machine's Chromium: well within the page's promise.
        assert took < 10, f"{took:.1f} s from the link to the room page"
        print(f"\nlink to room page with join_work {DEFAULT_JOIN_WORK_MS} ms: {took:.2f} s")
    finally:
        context.close()


@pytest.mark.parametrize(
    ("locale", "title", "button"),
    [
        ("en-GB", "Getting your place in line", "Get a place in line"),
        ("de-DE", "Ihr Platz in der Warteschlange wird vorbereitet", "Einen Platz"),
    ],
)
def test_the_page_speaks_the_visitors_language_and_axe_finds_nothing_serious(
    room: LocalProcess, browser: Any, locale: str, title: str, button: str
) -> None:
    if not AXE.exists():
        pytest.skip("axe-core missing: run npm ci")
    context = browser.new_context(locale=locale)
    try:
        page = context.new_page()
        seen = watch(page)
        page.goto(work_url(room, "#" + unsolvable_challenge()))
        sync_api.expect(page.get_by_role("heading", level=2)).to_have_text(title)
        progress = page.get_by_role("progressbar")
        assert progress.get_attribute("aria-label")
        assert page.locator("html").get_attribute("lang") == locale[:2]
        assert serious_violations(page) == []
        # Without a challenge: the link to start again, and no automatic loop.
        page.goto(work_url(room))
        link = page.get_by_role("link", name=re.compile(button))
        assert link.get_attribute("href") == "beekeeper"
        page.wait_for_timeout(300)
        assert page.url == work_url(room)
        assert serious_violations(page) == []
        assert seen.errors == []
        asked = [url for url in seen.requests if not url.startswith("blob:")]
        assert all(url.startswith(work_url(room)) for url in asked), asked
    finally:
        context.close()


def test_a_solved_challenge_gives_one_place_and_its_replay_none(
    room: LocalProcess, browser: Any
) -> None:
    """The solution the page sent, sent again: a fresh challenge, no second place."""
    context = browser.new_context()
    try:
        page = context.new_page()
        joined: list[str] = []
        page.on(
            "request",
            lambda request: joined.append(request.url) if "?work=" in request.url else None,
        )
        page.goto(room.urls["marketing URL"])
        page.wait_for_url(
            re.compile(re.escape(room.urls["page URL"]) + r"#turn=\d+"), timeout=30_000
        )
        (solution_url,) = joined
        # Another client, without the visitor's cookie, replays the solution.
        replayer = browser.new_context()
        again = replayer.request.get(solution_url, max_redirects=0)
        replayer.close()
        assert again.status == 302
        assert again.headers["location"].startswith("work#1.")
        assert "set-cookie" not in again.headers
    finally:
        context.close()
