"""The governor in a real local room over HTTP, against a loopback shop, with 8 s minutes.

`beekeeper local --dynamic-rate-throttling` runs the real governor on the room's schedule: it
samples the shop below over HTTP, writes the rate to the emulator's table and keeps its
decisions where `beekeeper status` reads them. The shop fails every 100th request throughout;
that never moves the rate. Then it answers 10x slower: two slow checks halve the rate.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from beekeeper.core.datamodel import GOVERNOR_LOG_KEY
from beekeeper.room.governor import BASELINE, BASELINE_CHECKS, HALVE, HOLD
from beekeeper.room.governor_records import Decision
from beekeeper.room.governor_records import recent_decisions as decisions_in
from tests.support.localroom.process import BEEKEEPER, LocalProcess, start_local, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.minutes(1.4)]

RATE = 1000
# A sample times out after a quarter of the minute (room/governor.py), and 6 failed of a
# check's 60 halve the rate. The loopback shop answers in 20 ms on a quiet machine; beside
# two CPU-bound processes and the suite's other workers, 12 of 60 samples took over 1 s (a 4 s
# minute's timeout) and a healthy check was halved. An 8 s minute gives each sample 2 s and
# spreads the 60 over 4 s.
MINUTE_SECONDS = 8.0
# How often the test reads the governor's log: the room's emulator answers these reads on the
# threads the governor's samples need, so not much more often than the samples themselves.
READ_EVERY_SECONDS = MINUTE_SECONDS / 8
HEALTHY_SECONDS = 0.02
SLOWER = 10


class LoopbackShop:
    """Answers after `delay` seconds; every `fail_every`-th request gets a 500."""

    def __init__(self) -> None:
        self.delay = HEALTHY_SECONDS
        self.fail_every = 100
        self.requests = 0
        self.failed = 0
        self.lock = threading.Lock()


@pytest.fixture
def shop() -> Iterator[tuple[LoopbackShop, str]]:
    state = LoopbackShop()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with state.lock:
                state.requests += 1
                fail = state.requests % state.fail_every == 0
                state.failed += fail
                delay = state.delay
            time.sleep(delay)
            self.send_response(500 if fail else 200)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"shop")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state, f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


class Decisions:
    """Every decision the running room's governor records, gathered from its log item."""

    def __init__(self, room: LocalProcess) -> None:
        self._room = room
        self._dynamodb = room.client("dynamodb")
        self.seen: dict[float, Decision] = {}

    def poll(self) -> list[Decision]:
        item = self._dynamodb.get_item(
            TableName=self._room.record["TableName"],
            Key={"pk": {"S": GOVERNOR_LOG_KEY}},
            ConsistentRead=True,
        ).get("Item")
        for decision in decisions_in(item):
            self.seen[decision.at] = decision
        return [self.seen[at] for at in sorted(self.seen)]

    def wait_for(self, count: int) -> list[Decision]:
        timeout = (count - len(self.seen) + 3) * MINUTE_SECONDS + 10

        def enough() -> list[Decision] | None:
            decisions = self.poll()
            return decisions if len(decisions) >= count else None

        got = wait_until(enough, timeout, READ_EVERY_SECONDS)
        assert got, f"the governor decided {len(self.seen)} times, not {count}"
        return list(got)

    def rate(self) -> int:
        item = self._dynamodb.get_item(
            TableName=self._room.record["TableName"], Key={"pk": {"S": "config"}}
        ).get("Item")
        return int(item["rate"]["N"]) if item else RATE


@pytest.fixture
def governed_room(
    shop: tuple[LoopbackShop, str], tmp_path: Path
) -> Iterator[tuple[LocalProcess, LoopbackShop]]:
    state, url = shop
    args = ["--origin", url, "--rate", str(RATE), "--dynamic-rate-throttling"]
    room = start_local([*args, "--minute-seconds", str(MINUTE_SECONDS)], tmp_path, name="governed")
    try:
        yield room, state
    finally:
        if room.process.poll() is None:
            room.interrupt()


def test_lone_failures_leave_the_rate_alone_and_a_10x_slower_shop_is_halved(
    governed_room: tuple[LocalProcess, LoopbackShop], tmp_path: Path
) -> None:
    room, shop = governed_room
    decisions = Decisions(room)

    # The baseline, then three more minutes; one request in 100 fails throughout.
    seen = decisions.wait_for(BASELINE_CHECKS + 3)
    described = [d.describe() for d in seen]
    assert seen[BASELINE_CHECKS - 1].decision == BASELINE, described
    assert seen[BASELINE_CHECKS - 1].reason.startswith("baseline from 5 healthy checks")
    assert [d.rate_after for d in seen] == [RATE] * len(seen)
    assert all(d.decision != HALVE for d in seen)
    assert shop.failed >= 4  # the governor met failures and let them be
    assert sum(d.errors for d in seen) >= 1
    assert decisions.rate() == RATE

    # 10x slower from the next check on: the first slow check holds, the second halves.
    shop.delay = HEALTHY_SECONDS * SLOWER
    before = len(decisions.poll())
    seen = decisions.wait_for(before + 3)
    slow = seen[before:]
    # The switch may land inside a check: it is judged on part of the slow samples.
    if slow[0].decision not in (HOLD, HALVE):
        slow = slow[1:]
    assert [d.decision for d in slow[:2]] == [HOLD, HALVE], [d.describe() for d in seen]
    assert slow[1].rate_after == RATE // 2
    assert slow[1].reason.startswith("slow 2 checks in a row: median over the baseline's limit")
    assert decisions.rate() <= RATE // 2

    # `beekeeper status` shows the decisions with their reasons.
    status = subprocess.run(
        [BEEKEEPER, "status", "governed", "--json"],
        env={**os.environ, "BEEKEEPER_CONFIG_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(status.stdout)
    assert report["slowed"] is True
    assert HALVE in [d["decision"] for d in report["governor_decisions"]]
    assert report["governor_baseline_median_ms"] < HEALTHY_SECONDS * 1000 * 3
