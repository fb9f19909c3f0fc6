"""Benchmark: how long an operator's hold, close, off or rate change takes to reach every page.

    .venv/bin/python bench/propagation.py [--pages 60] [--json]

Runs a local room (`beekeeper local`'s LocalRoom: the real producer, trigger, consumers, status
publisher and templates, behind the in-process edge that keeps the shared state as the
distribution does) and, for each change, a crowd of waiting pages that fetch the shared state
as a visible page does (core/serving.py: every DOCUMENT_EVERY_SECONDS, each from its own moment
of loading). The change is made the way `beekeeper hold|close|off|rate` makes it (RoomControl),
at a random moment; a page has it when a document it fetched says so (the page acts on the
document it holds: it stops its line at the hold's announced moment, shows the close, asks to
be let in, or counts with the new rate). Reported: per change, the time from the command to
the last page having it (the goal: 10 s), the median, and the requests the edge and the origin
saw.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from beekeeper.cli.room_control import RoomControl
from beekeeper.core.retry import Pauses
from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS
from beekeeper.core.shared_state import parse_history
from beekeeper.local.room import LocalOptions, LocalRoom, local_room

GOAL_SECONDS = 10.0
WARM_UP_SECONDS = DOCUMENT_EVERY_SECONDS + 2.0
RATE = 600
NEW_RATE = 1_200


def _document(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 - a loopback room
        body: dict[str, Any] = json.load(answer)
        return body


def _hold_announced(doc: dict[str, Any]) -> bool:
    """The document announces a hold (its newest point stops the flow at a moment: every page
    then stops its line there, core/serving.py), or the hold has come."""
    points = parse_history(str(doc.get("history", "")))
    return doc.get("state") == "paused" or bool(points and points[-1].until_ms)


CHANGES: dict[str, tuple[Callable[[RoomControl], object], Callable[[dict[str, Any]], bool]]] = {
    "hold": (lambda control: control.hold(), _hold_announced),
    "close": (
        lambda control: control.close("Sold out"),
        lambda doc: doc.get("state") == "closed",
    ),
    "off": (lambda control: control.set_enabled(False), lambda doc: doc.get("state") == "off"),
    "rate": (lambda control: control.set_rate(NEW_RATE), lambda doc: doc.get("rate") == NEW_RATE),
}


def measure(change: str, pages: int, rng: random.Random) -> dict[str, Any]:
    make, seen = CHANGES[change]
    with tempfile.TemporaryDirectory() as config:
        os.environ["BEEKEEPER_CONFIG_DIR"] = config
        room = LocalRoom(
            local_room(rate=RATE, origin="http://127.0.0.1:9/shop", name=f"propagation-{change}"),
            LocalOptions(port=0, operator_port=0, save_line=False),
        )
        room.start()
        try:
            assert room.urls and room.resources and room.settings and room.emulator
            state_url = room.urls.page_url.removesuffix("/room") + "/state"
            dynamodb = room.emulator.client("dynamodb")
            control = RoomControl(
                dynamodb,
                room.resources.table_name,
                room.settings,
                clock=time.time,
                pauses=Pauses(sleep=time.sleep, random=random.random),
            )
            started = time.time()
            changed_at: list[float] = []
            had_it: dict[int, float] = {}
            stop = threading.Event()

            def page(index: int, phase: float) -> None:
                next_at = started + phase
                while not stop.is_set():
                    stop.wait(max(0.0, next_at - time.time()))
                    if stop.is_set():
                        return
                    try:
                        doc = _document(state_url)
                    except OSError:
                        doc = {}
                    if changed_at and index not in had_it and seen(doc):
                        had_it[index] = time.time()
                    next_at += DOCUMENT_EVERY_SECONDS

            threads = [
                threading.Thread(
                    target=page, args=(i, rng.uniform(0, DOCUMENT_EVERY_SECONDS)), daemon=True
                )
                for i in range(pages)
            ]
            for thread in threads:
                thread.start()
            time.sleep(WARM_UP_SECONDS + rng.uniform(0, DOCUMENT_EVERY_SECONDS))
            edge_before = room.edge.counts.edge_total if room.edge else 0
            origin_before = room.edge.counts.origin_total if room.edge else 0
            changed_at.append(time.time())
            make(control)
            deadline = changed_at[0] + 3 * GOAL_SECONDS
            while len(had_it) < pages and time.time() < deadline:
                time.sleep(0.05)
            stop.set()
            for thread in threads:
                thread.join(5)
            delays = sorted(at - changed_at[0] for at in had_it.values())
            elapsed = time.time() - changed_at[0]
            edge = (room.edge.counts.edge_total - edge_before) if room.edge else 0
            origin = (room.edge.counts.origin_total - origin_before) if room.edge else 0
            return {
                "change": change,
                "pages": pages,
                "reached": len(delays),
                "longest_seconds": round(delays[-1], 2) if delays else None,
                "median_seconds": round(statistics.median(delays), 2) if delays else None,
                "within_goal": len(delays) == pages and delays[-1] <= GOAL_SECONDS,
                "edge_requests_per_second": round(edge / elapsed, 1),
                "origin_requests_per_second": round(origin / elapsed, 2),
            }
        finally:
            room.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--changes", default=",".join(CHANGES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    results = [measure(change, args.pages, rng) for change in args.changes.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(
                f"{r['change']:>5}: all {r['reached']}/{r['pages']} pages within "
                f"{r['longest_seconds']} s (median {r['median_seconds']} s); edge "
                f"{r['edge_requests_per_second']}/s, origin {r['origin_requests_per_second']}/s"
            )
    return 0 if all(r["within_goal"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
