"""Benchmark: how long `beekeeper report` takes to read an event and draw its page, and how big
the page is.

    .venv/bin/python bench/report_build.py

Each event is simulated with the real producer, trigger and consumers; their EMF lines go into
the store's CloudWatch (tests/support/event_reports.py), and the report reads them as it reads
a deployed room's, then draws the page with matplotlib. Reading here makes no network call:
against AWS, add the round trips of its GetMetricData calls (printed) and one BatchGetItem.
"""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the tests' helpers are the package `tests.support`

from beekeeper.charts.event_report import event_report  # noqa: E402
from beekeeper.core.settings import RoomSettings  # noqa: E402
from beekeeper.simulator.run import EPOCH, Arrival  # noqa: E402
from tests.support.event_reports import SimulatedRoom, spring_sale  # noqa: E402

# (what, rate, visitors, arrival, minutes simulated, --since or None: the last event)
EVENTS = [
    ("2 hours, 120,000 visitors", 1000, 120_000, "uniform:100", 120, None),
    ("a day's window (1,440 minutes)", 100, 6000, "uniform:60", 70, "24h"),
]


def measure(what: str, room: SimulatedRoom, window: str | None) -> None:
    before = room.cloudwatch.calls
    started = time.perf_counter()
    report = room.report(since=window)
    read = time.perf_counter() - started
    calls = room.cloudwatch.calls - before
    started = time.perf_counter()
    page = event_report(report, command="beekeeper report bench")
    drawn = time.perf_counter() - started
    size = len(page.encode())
    print(
        f"{what:<34} {report.minutes:>7} {calls:>5} {read:>7.2f} {drawn:>7.2f} "
        f"{size / 1024:>8,.0f} {len(gzip.compress(page.encode())) / 1024:>8,.0f}"
    )


def main() -> None:
    print(f"{'event':<34} {'minutes':>7} {'calls':>5} {'read s':>7} {'draw s':>7} "
          f"{'KB':>8} {'gzip KB':>8}")  # fmt: skip
    room, _ = spring_sale()
    measure("the documents' spring sale (16 min)", room, None)
    for what, rate, visitors, arrival, minutes, window in EVENTS:
        settings = RoomSettings(
            name="spring-sale", display_name="Spring Sale", region="eu-west-1",
            origin="https://shop.example/", rate=rate, dynamic_rate_throttling=True,
        )  # fmt: skip
        room = SimulatedRoom(settings, now=EPOCH + minutes * 60 + 600)
        room.run(rate=rate, visitors=visitors, arrival=Arrival.parse(arrival),
                 minutes=minutes, seed=1)  # fmt: skip
        measure(what, room, window)


if __name__ == "__main__":
    main()
