"""The event report's page: its words computed from the figures, self-contained, accessible."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from beekeeper.charts.event_data import Capacity, EventReport, Waits
from beekeeper.charts.event_report import event_report, headline, summary_lines, timeline_of
from beekeeper.cli.report_window import WindowError, given_window, parse_time
from beekeeper.room.governor_records import Decision
from tests.support.html_page import Page, fetches_nothing

NINE = datetime(2026, 5, 1, 9, 0, tzinfo=UTC).timestamp()
NOW = NINE + 3 * 3600


def report(**changes: Any) -> EventReport:
    """An event of 12 minutes from 9:00 UTC: 12,400 came in the first 8, 1,000 let in a
    minute; the line peaked at 8,100 at 9:03."""
    minutes = 12
    arrivals = [3000, 4000, 2000, 1500, 800, 600, 300, 200, 0, 0, 0, 0]
    waiting = [0, 2000, 5000, 8100, 7600, 6400, 5000, 3300, 1500, 200, 0, 0]
    values: dict[str, Any] = {
        "room": "spring-sale",
        "local": False,
        "generated_at": int(NOW),
        "since": NINE,
        "until": NINE + minutes * 60,
        "window": "given",
        "window_said": "",
        "minute_seconds": 60.0,
        "arrivals_per_minute": arrivals,
        "admitted_per_minute": [1000] * 10 + [400, 0],
        "rate_per_minute": [1000] * minutes,
        "operator_rate_per_minute": [1000] * minutes,
        "waiting_per_minute": waiting,
        "rejoined_per_minute": [0] * 5 + [3, 4] + [0] * 5,
        "waits": Waits(
            timed=10_400,
            p50=330.0,
            p90=610.0,
            p99=700.5,
            longest=742.0,
            bin_seconds=60,
            counts=[1000] * 10 + [400, 0, 0],
        ),
        "wait_p50_per_minute": [float(m * 40) for m in range(minutes)],
        "wait_p90_per_minute": [float(m * 60) for m in range(minutes)],
        "capacity": None,
        "governor": True,
        "governor_per_minute": {
            "halved": [0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
            "held": [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "raised": [0] * 8 + [1, 1, 1, 0],
        },
        "governor_decisions": [
            Decision(
                at=NINE + 3 * 60 + 25,
                decision="halve",
                reason="60 of 60 samples failed",
                rate_before=1000,
                rate_after=500,
                samples=60,
                errors=60,
                median_ms=None,
                p90_ms=None,
                mean_ms=None,
                slow_above_ms=None,
            )
        ],
        "origin_requests_per_minute": [9000, 12000, 9100, 8000] + [5000] * 8,
        "edge": False,
        "edge_requests_per_minute": None,
        "arrivals_total": 12_400,
        "admitted_total": 10_400,
        "waiting_now": 0,
        "notes": ["This room has no edge."],
    }
    values.update(changes)
    return EventReport(**values)


def test_the_words_on_top_say_the_event() -> None:
    event = report()
    lines = summary_lines(event, timeline_of(event))
    assert lines == [
        "12,400 came between 9:00 and 9:08 UTC; 10,400 were let in, at 1,000 a minute.",
        "Half waited within 6 minutes, 9 in 10 within 11 minutes and 99 in 100 within 12 "
        "minutes; the longest wait was 12 min 22 s.",
        "The line peaked at 8,100 at 9:03 and was empty from 9:10 on.",
        "7 visitors came back after their admission had expired (or with a place the room no "
        "longer knew) and joined the line again; the room does not count admissions that "
        "expired unused.",
        "The governor halved the rate twice (first at 9:03), held it once (the shop was "
        "slow) and raised it again 3 times; the lowest rate was 1,000 a minute.",
        "API Gateway (the origin) answered 78,100 requests, at most 12,000 in a minute (at "
        "9:01); there is no edge (CloudFront) in front of this room.",
    ]
    assert headline(event) == "spring-sale: 1 May 2026, 9:00 to 9:12 UTC"


def test_the_words_follow_the_figures() -> None:
    event = report(
        waiting_per_minute=[0, 10, 40, 30, 20, 20, 20, 20, 20, 20, 20, 15],
        waits=dataclasses.replace(report().waits, timed=9_000),  # type: ignore[type-var]
        rate_per_minute=[1000, 1000, 500, 500, 250] + [1000] * 7,
        governor=False,
        window="last event",
        window_said="The room's last event, found in its metrics.",
    )
    lines = summary_lines(event, timeline_of(event))
    assert lines[0].endswith("10,400 were let in, at 250 to 1,000 a minute.")
    assert lines[1].endswith("(the waits of 9,000 of the 10,400 let in).")
    assert lines[2] == "The line peaked at 40 at 9:02; 15 visitors still waited at 9:11."
    assert lines[4] == "The governor (dynamic rate throttling) is off for this room."
    assert lines[-1] == "The room's last event, found in its metrics."


def test_a_quiet_window_is_said_plainly() -> None:
    quiet = report(
        arrivals_per_minute=[None] * 12,
        admitted_per_minute=[0] * 12,
        waiting_per_minute=[None] * 12,
        rejoined_per_minute=[0] * 12,
        waits=None,
        wait_p50_per_minute=None,
        wait_p90_per_minute=None,
        governor_per_minute={"halved": [0] * 12, "held": [0] * 12, "raised": [0] * 12},
        origin_requests_per_minute=[None] * 12,
        rate_per_minute=[None] * 12,
    )
    lines = summary_lines(quiet, timeline_of(quiet))
    assert lines[:3] == [
        "Nobody came between 9:00 and 9:12 UTC (the arrivals are not known, and nobody was "
        "let in).",
        "Nobody was let in, so nobody's wait can be told.",
        "The line is not known: the trigger recorded nothing in this window.",
    ]
    assert lines[4] == "The governor did not change the rate: the shop answered in time throughout."
    document = event_report(quiet, command="beekeeper report spring-sale")
    assert fetches_nothing(document) == []
    assert len(Page(document).all("svg")) == 2  # the per-minute chart and the line, empty


def test_a_capacity_room_says_how_full_the_shop_was_and_who_left() -> None:
    capacity = Capacity(
        inside_per_minute=[0, 150, 400, 400, 400, 390, 200, 100, 50, 10, 0, 0],
        max_inside_per_minute=[400] * 12,
        left_line_per_minute=[0, 5, 10, 20, 0, 0, 0, 0, 0, 0, 0, 0],
        left_shop_per_minute=[0, 0, 30, 30, 20, 0, 0, 0, 0, 0, 0, 0],
        no_shows_per_minute=[0, 0, 0, 4, 4, 4, 0, 0, 0, 0, 0, 0],
        sessions_ended_per_minute=[0] * 11 + [1],
    )
    event = report(capacity=capacity)
    lines = summary_lines(event, timeline_of(event))
    assert lines[3] == (
        "The shop was full as 3 minutes began, from 9:02 to 9:05; at most 400 were inside "
        "(the cap: 400)."
    )
    assert lines[4] == (
        "35 visitors left the line before their turn, 80 left the shop, 12 let in never "
        "arrived and 1 session ran out."
    )
    page = Page(event_report(event, command="x"))
    assert {"inside", "gone"} <= set(page.ids())


def test_the_page_is_self_contained_and_every_chart_has_words_and_numbers() -> None:
    document = event_report(report(), command="beekeeper report spring-sale --out r.html")
    assert fetches_nothing(document) == []
    page = Page(document)
    ids = page.ids()
    assert len(ids) == len(set(ids)), "ids repeat across charts"
    charts = page.all("svg")
    # per minute, the line, the waits, waits by minute, who came back, the governor, requests
    assert len(charts) == 7
    for svg in charts:
        assert svg["role"] == "img"
        assert svg["aria-labelledby"] in ids and svg["aria-describedby"] in ids
    figures = re.findall(r'<figure class="chart" id="([^"]+)"', document)
    captions = re.findall(r'<figcaption id="[^"]+">([^<]+)</figcaption>', document)
    tables = re.findall(r"<details><summary>The numbers</summary><table>", document)
    assert len(figures) == len(captions) == len(tables) == 7
    assert all(len(c) > 40 for c in captions)
    # The governor's decisions with their reasons, and the notes.
    assert "60 of 60 samples failed" in document and "This room has no edge." in document
    assert event_report(report(), command="x") == event_report(report(), command="x")


def test_a_day_of_minutes_stays_small() -> None:
    minutes = 24 * 60
    event = report(
        until=NINE + minutes * 60,
        arrivals_per_minute=[m % 97 for m in range(minutes)],
        admitted_per_minute=[m % 89 for m in range(minutes)],
        rate_per_minute=[100] * minutes,
        operator_rate_per_minute=[100] * minutes,
        waiting_per_minute=[m % 300 for m in range(minutes)],
        rejoined_per_minute=[m % 3 for m in range(minutes)],
        wait_p50_per_minute=[float(m % 60) for m in range(minutes)],
        wait_p90_per_minute=[float(m % 90) for m in range(minutes)],
        governor_per_minute={k: [m % 2 for m in range(minutes)] for k in ("halved", "held",
                                                                           "raised")},
        origin_requests_per_minute=[m * 3 for m in range(minutes)],
    )  # fmt: skip
    document = event_report(event, command="x")
    assert len(document.encode()) < 3_000_000


def test_fetches_nothing_finds_what_a_browser_would_fetch() -> None:
    bad = (
        '<html><head><meta http-equiv="Content-Security-Policy" content="default-src *">'
        '<script src="https://cdn.example/x.js"></script></head>'
        '<body><img src="a.png"><div style="background: url(https://x/y.png)"></div>'
        "<style>@import 'x.css';</style></body></html>"
    )
    found = fetches_nothing(bad)
    assert "no Content-Security-Policy of default-src 'none'" in found
    assert "a <script>" in found and "a <img>" in found and "@import" in found
    assert any(f.startswith("url(https://x/y.png") for f in found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01T09:00", NINE),
        ("2026-05-01T09:00Z", NINE),
        ("2026-05-01 11:00+02:00", NINE),
        ("2026-05-01T09:00:30", NINE + 30),
        ("3h", NINE),
        ("90m", NOW - 5400),
        ("1d", NOW - 86_400),
        ("45s", NOW - 45),
        ("now", NOW),
    ],
)
def test_times_are_iso_or_ago(text: str, expected: float) -> None:
    assert parse_time(text, now=NOW, option="--since") == expected


@pytest.mark.parametrize("text", ["yesterday", "9:00", "2h ago", "-2h", "2026-13-01", ""])
def test_a_time_that_is_none_says_what_to_write(text: str) -> None:
    with pytest.raises(WindowError) as raised:
        parse_time(text, now=NOW, option="--since")
    message = str(raised.value)
    assert message.startswith(f"--since {text!r} is not a time: use an ISO 8601 time such as")
    assert "2h" in message


def test_a_window_is_aligned_to_minutes_and_checked() -> None:
    window = given_window("2026-05-01T09:00:20", "2026-05-01T09:10:10", now=NOW,
                          bucket_seconds=60)  # fmt: skip
    assert window is not None
    assert (window.since, window.until) == (NINE, NINE + 11 * 60)
    with pytest.raises(WindowError, match="--since must be before --until"):
        given_window("1h", "2h", now=NOW, bucket_seconds=60)
    with pytest.raises(WindowError, match="at most 24 hours"):
        given_window("3d", None, now=NOW, bucket_seconds=60)
    assert given_window(None, None, now=NOW, bucket_seconds=60) is None
    only_until = given_window(None, "1h", now=NOW, bucket_seconds=60)
    assert only_until is not None and only_until.until - only_until.since == 24 * 3600
