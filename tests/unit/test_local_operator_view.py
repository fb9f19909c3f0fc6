"""The live operator view: its series from the room's counters, and whom it answers."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS
from beekeeper.local.live_counters import (
    HOUR_MINUTES,
    REQUESTS_WINDOW_SECONDS,
    LiveCounters,
    Reading,
)
from beekeeper.local.operator_view import OperatorView, requests_said

MINUTE = 60.0
T0 = 1_800_000_000.0  # a whole minute


def reading(seconds: float, arrivals: int, admitted: int, rate: int = 100) -> Reading:
    return Reading(at=T0 + seconds, arrivals=arrivals, admitted=admitted, rate=rate)


def test_per_minute_figures_are_the_counters_growth_within_each_minute() -> None:
    counters = LiveCounters(MINUTE, sample_seconds=10)
    for r in (reading(0, 0, 0), reading(30, 50, 10), reading(60, 80, 40),
              reading(100, 90, 70, rate=50), reading(125, 95, 80, rate=50)):  # fmt: skip
        counters.add(r)
    series = counters.series(now=T0 + 130)
    # The room started at T0: three minutes so far, the last one under way.
    assert series.first_minute_at == T0
    assert series.arrivals_per_minute == [80, 10, 5]
    assert series.admitted_per_minute == [40, 30, 10]
    assert series.rate_per_minute == [100, 50, 50]
    # Every 10 s: the line as last read by then.
    assert series.waiting == [0, 0, 0, 40, 40, 40, 40, 40, 40, 40, 20, 20, 20, 15]
    assert series.latest == reading(125, 95, 80, rate=50)


def test_the_series_cover_at_most_the_last_hour_ending_with_this_minute() -> None:
    counters = LiveCounters(MINUTE, sample_seconds=30)
    for i in range(2 * 90):  # an hour and a half, a reading every 30 s, one arrival each
        counters.add(reading(i * 30, i, 0))
    series = counters.series(now=T0 + 90 * MINUTE - 1)
    assert len(series.arrivals_per_minute) == HOUR_MINUTES
    assert series.first_minute_at == T0 + 30 * MINUTE
    assert series.arrivals_per_minute[:-1] == [2] * (HOUR_MINUTES - 1)
    assert series.arrivals_per_minute[-1] == 1  # this minute: one reading in so far


def test_shortened_minutes_make_an_hour_of_shortened_minutes() -> None:
    counters = LiveCounters(3.0, sample_seconds=1)
    for i in range(10):
        counters.add(reading(i, i * 2, i))
    series = counters.series(now=T0 + 9.5)
    assert series.minute_seconds == 3.0
    # A reading on a minute's boundary closes the minute before it.
    assert series.arrivals_per_minute == [6, 6, 6, 0]
    assert series.admitted_per_minute == [3, 3, 3, 0]


def test_before_the_first_reading_there_is_nothing_to_show() -> None:
    series = LiveCounters(MINUTE, sample_seconds=2).series(now=T0 + 5)
    assert series.latest is None
    assert series.arrivals_per_minute == [0] and series.waiting == [0, 0, 0]


def test_pages_polling_every_few_seconds_show_as_requests_between_any_two_readings() -> None:
    """A watched page asks for the shared state every DOCUMENT_EVERY_SECONDS; the room reads
    its counters every 2 s. Whenever the view looks, it shows the pages' requests."""
    counters = LiveCounters(MINUTE, sample_seconds=2)
    now = [T0]
    view = OperatorView(room="sale", counters=counters, clock=lambda: now[0])
    view.port = 8082
    pages = 3
    shown = []
    for tick in range(0, 91, 2):
        # Each page's poll so far (the pages' first polls at 1, 3 and 5 s), at the edge; every
        # other one missed the edge's 2 s copy and reached the origin.
        polls = sum(
            len(range(first, tick + 1, DOCUMENT_EVERY_SECONDS)) for first in range(1, 2 * pages, 2)
        )
        counters.add(
            Reading(
                at=T0 + tick,
                arrivals=pages,
                admitted=0,
                rate=10,
                edge_requests=polls,
                origin_requests=polls // 2,
            )
        )
        if tick >= REQUESTS_WINDOW_SECONDS:
            now[0] = T0 + tick + 1
            series = counters.series(now=now[0])
            # 3 pages, each every 6 s: half a request a second at the edge, give or take the
            # poll the window's edge cuts.
            assert 0.4 <= series.edge_per_second <= 0.6
            assert 0.2 <= series.origin_per_second <= 0.3
            shown.append(call(view, "/charts")["body"])
    assert all('<dd data-figure="edge-requests">' in body for body in shown)
    said = {body.split('data-figure="edge-requests">')[1].split("<")[0] for body in shown}
    assert said <= {f"{n} a minute" for n in range(24, 37)}


@pytest.mark.parametrize(
    ("per_second", "said"),
    [
        (0, "none"),
        (0.004, "none"),
        (1 / 6, "10 a minute"),
        (0.99, "59 a minute"),
        (1, "1.0 a second"),
        (1234.56, "1,234.6 a second"),
    ],
)
def test_request_rates_are_said_so_a_few_polling_pages_are_not_zero(
    per_second: float, said: str
) -> None:
    assert requests_said(per_second) == said


# -- whom the view answers ----------------------------------------------------------------------


@pytest.fixture
def view() -> OperatorView:
    counters = LiveCounters(MINUTE, sample_seconds=10)
    counters.add(reading(0, 0, 0))
    counters.add(reading(20, 120, 100, rate=600))
    app = OperatorView(room="sale", counters=counters, clock=lambda: T0 + 25)
    app.port = 8082
    return app


def call(app: OperatorView, path: str = "/", method: str = "GET", **headers: str) -> Any:
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "HTTP_HOST": "127.0.0.1:8082"}
    environ.update({f"HTTP_{k.upper()}": v for k, v in headers.items()})
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer["status"], answer["headers"] = status, dict(headers)

    answer["body"] = b"".join(app(environ, start_response)).decode()
    return answer


def test_the_page_shows_the_figures_and_both_charts_under_a_strict_policy(
    view: OperatorView,
) -> None:
    answer = call(view, "/", SEC_FETCH_SITE="none")
    assert answer["status"] == "200 OK"
    headers = answer["headers"]
    assert headers["Content-Security-Policy"].startswith("default-src 'none'; script-src 'self'")
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"
    assert not [h for h in headers if h.startswith("Access-Control-")]
    body = answer["body"]
    assert '<dd data-figure="arrived">120</dd>' in body
    assert '<dd data-figure="waiting">20</dd>' in body
    assert '<dd data-figure="rate">600 a minute</dd>' in body
    assert body.count("<svg") == 2 and '<script src="view.js" defer></script>' in body
    assert "<script>" not in body


def test_the_refresh_fragment_and_the_script(view: OperatorView) -> None:
    fragment = call(view, "/charts", ORIGIN="http://127.0.0.1:8082", SEC_FETCH_SITE="same-origin")
    assert fragment["status"] == "200 OK" and fragment["body"].count("<svg") == 2
    assert "<html" not in fragment["body"]
    script = call(view, "/view.js")
    assert script["headers"]["Content-Type"].startswith("text/javascript")
    assert 'fetch("charts"' in script["body"]
    assert call(view, "/elsewhere")["status"] == "404 Not Found"


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"ORIGIN": "http://127.0.0.1:8080"}, "another origin"),  # the room's own pages
        ({"ORIGIN": "http://localhost:8081"}, "another origin"),  # the demo shop's
        ({"ORIGIN": "null"}, "another origin"),
        ({"SEC_FETCH_SITE": "same-site"}, "another site"),
        ({"SEC_FETCH_SITE": "cross-site"}, "another site"),
        ({"HOST": "rebound.example:8082"}, "its own loopback address"),
    ],
)
def test_requests_from_elsewhere_are_refused(
    view: OperatorView, headers: dict[str, str], why: str
) -> None:
    for path in ("/", "/charts", "/view.js"):
        answer = call(view, path, **headers)
        assert answer["status"] == "403 Forbidden"
        assert why in answer["body"] and "<svg" not in answer["body"]


def test_only_get_and_head(view: OperatorView) -> None:
    answer = call(view, "/", method="POST")
    assert answer["status"] == "405 Method Not Allowed"
    assert answer["headers"]["Allow"] == "GET, HEAD"


def test_without_matplotlib_the_view_says_which_extra_draws_the_charts(
    view: OperatorView, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    body = call(view, "/charts")["body"]
    assert "<svg" not in body and '<dd data-figure="admitted">100</dd>' in body
    assert "needs the charts extra (matplotlib is not installed)" in body


def test_the_view_shows_the_pages_subscribed_and_what_was_pushed_to_them() -> None:
    counters = LiveCounters(MINUTE, sample_seconds=10)
    counters.add(
        Reading(
            at=T0, arrivals=30, admitted=10, rate=60, subscriptions=20, publishes=3, deliveries=57
        )
    )
    app = OperatorView(room="sale", counters=counters, clock=lambda: T0 + 5)
    app.port = 8082
    body = call(app, "/charts", SEC_FETCH_SITE="same-origin")["body"]
    assert '<dd data-figure="pages-subscribed">20</dd>' in body
    assert '<dd data-figure="changes-pushed">3 (57 deliveries)</dd>' in body
